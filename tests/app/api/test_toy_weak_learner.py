"""A weak learner and an ensemble layout declared in this file alone train, serve, save and
load: through the core and through the HTTP API, with no other file knowing of them.

The toy learner thresholds feature 0 at one of its weighted deciles each round (the cut
and orientation of least weighted error); its learners are stored in a toy layout of two
arrays (``cut``, ``left``). Registering the two declarations is all it takes: the API
accepts ``weak_learner: "toy"`` and lists it (OpenAPI enum, the catalog's
``weak_learners``), the boosting loop trains it, the artifact stores the toy layout and
loads it back. The fixture takes both away again, so no other test sees them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from app.db import make_engine
from app.settings import Settings
from models.boosting.adaboost import AdaBoost
from models.boosting.calibrated import CalibratedBoosting
from models.exceptions import ArtifactError, InvalidInput
from models.inference.artifacts import dump_model, load_model
from models.inference.ensemble import Ensemble
from models.inference.layouts import ENSEMBLE_LAYOUTS, register_layout
from models.specs.layout import EnsembleLayout
from models.specs.weak_learner import WeakLearnerSpec
from models.weak import WEAK_LEARNERS, register_weak_learner, unregister_weak_learner
from tests.app.api.conftest import dataset, train_body

# ------------------------------------------------------------ the toy layout
# h_t(x) = left_t if x[0] <= cut_t else -left_t (NaN: -left_t)


def _prepare(alphas: np.ndarray, arrays: dict[str, np.ndarray], n_features: int) -> dict[str, Any]:
    for name, a in arrays.items():
        if a.shape != alphas.shape:
            raise ArtifactError(f"array {name!r} must have one entry per learner")
    if not np.all(np.abs(arrays["left"]) == 1.0):
        raise ArtifactError("array 'left' must hold -1 or +1")
    return {}


def _outputs(ensemble: Ensemble, X: np.ndarray) -> np.ndarray:
    left = ensemble.arrays["left"]
    return np.where(X[:, :1] <= ensemble.arrays["cut"], left, -left)  # type: ignore[no-any-return]


TOY_LAYOUT = EnsembleLayout(
    name="toy_cuts",
    description="x[0] <= cut answers left, else -left",
    arrays={"cut": np.float64, "left": np.float64},
    prepare=_prepare,
    outputs=_outputs,
)


# ----------------------------------------------------------- the toy learner
class DecileCutTrainer:
    """Feature 0 cut at the weighted decile (and orientation) of least weighted error."""

    def __init__(self, X: np.ndarray, y: np.ndarray) -> None:
        self.x = np.asarray(X, dtype=np.float64)[:, 0]
        self.pos = y > 0
        self.order = np.argsort(self.x, kind="stable")
        self.n_features = int(np.asarray(X).shape[1])

    def fit_round(self, w: np.ndarray) -> tuple[tuple[float, float], np.ndarray]:
        cw = np.cumsum(w[self.order])
        at = np.searchsorted(cw, cw[-1] * np.linspace(0.1, 0.9, 9))
        cuts = self.x[self.order][np.minimum(at, len(cw) - 1)]
        left = self.x[None, :] <= cuts[:, None]  # (cuts, rows)
        err = (left & ~self.pos) @ w + (~left & self.pos) @ w  # answering +1 on the left
        best = int(np.argmin(np.minimum(err, w.sum() - err)))
        sign = 1.0 if err[best] <= w.sum() - err[best] else -1.0
        return (float(cuts[best]), sign), np.where(left[best], sign, -sign)

    def assemble(self, learners: list[Any], alphas: np.ndarray) -> Ensemble:
        cuts, signs = zip(*learners, strict=True) if learners else ((), ())
        arrays = {"cut": np.asarray(cuts, dtype=np.float64), "left": np.asarray(signs, float)}
        return Ensemble("toy_cuts", np.asarray(alphas, dtype=np.float64), arrays, self.n_features)


TOY = WeakLearnerSpec(
    name="toy",
    description="feature 0 cut at its best weighted decile",
    layout="toy_cuts",
    binary=lambda X, y, sample_weight, settings: DecileCutTrainer(X, y),
)


@pytest.fixture
def toy() -> Iterator[WeakLearnerSpec]:
    register_layout(TOY_LAYOUT)
    register_weak_learner(TOY)
    try:
        yield TOY
    finally:
        unregister_weak_learner(TOY.name)
        del ENSEMBLE_LAYOUTS[TOY_LAYOUT.name]


def _data() -> tuple[np.ndarray, np.ndarray]:
    X, y = dataset(300)
    X[:, 0] += np.where(y == 1, 1.5, -1.5)  # feature 0 separates the classes
    return X, y


# --------------------------------------------------------------------- tests
def test_the_toy_learner_trains_saves_and_loads_through_the_core(toy: WeakLearnerSpec) -> None:
    X, y = _data()
    model = CalibratedBoosting(AdaBoost(n_estimators=12, weak_learner="toy"), random_state=0)
    model.fit(X, y)
    booster = model.estimator_
    assert booster.ensemble_.kind == "toy_cuts" and booster.n_estimators_ >= 2
    assert np.mean(booster.predict(X) == y) > 0.75
    blob, digest = dump_model(model.to_inference())
    back = load_model(blob, digest)
    assert np.array_equal(back.predict_proba(X), model.predict_proba(X))


def test_the_toy_learner_trains_and_serves_through_the_api(
    toy: WeakLearnerSpec, settings: Settings
) -> None:
    from app.api.main import create_app

    X, y = _data()
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        enum = client.get("/openapi.json").json()["components"]["schemas"]["TrainingRequest"]
        listed = [o.get("enum") for o in enum["properties"]["weak_learner"]["anyOf"]]
        assert "toy" in next(e for e in listed if e)
        catalog = {a["name"]: a for a in client.get("/v1/algorithms").json()["algorithms"]}
        assert "toy" in catalog["adaboost"]["weak_learners"]

        body = train_body(n_estimators=12, weak_learner="toy")
        body.update(features=X.tolist(), labels=y.tolist())
        r = client.post("/v1/models/toy/versions", json=body)
        assert r.status_code == 201, r.text
        assert r.json()["algorithm"] == "adaboost" and r.json()["params"]["weak_learner"] == "toy"
        out = client.post("/v1/models/toy/predict", json={"instances": X[:20].tolist()})
        assert out.status_code == 200, out.text
        served = np.array([p["probabilities"] for p in out.json()["predictions"]])

    engine = make_engine(settings.database_url)
    with engine.connect() as conn:
        blob = bytes(conn.execute(text("SELECT data FROM artifacts")).scalar_one())
    engine.dispose()
    back = load_model(blob)
    assert back.scorer.to_parts()[0]["ensemble_kind"] == "toy_cuts"
    assert np.array_equal(back.predict_proba(X[:20]), served)


def test_without_the_registration_toy_is_refused(client: TestClient) -> None:
    """The fixture took the toy away: the API and the core refuse it, naming the field."""
    assert "toy" not in WEAK_LEARNERS and "toy_cuts" not in ENSEMBLE_LAYOUTS
    r = client.post("/v1/models/toy/versions", json=train_body(weak_learner="toy"))
    assert r.status_code == 422, r.text
    assert "weak_learner" in r.text and "stump" in r.text  # lists the registered ones
    X, y = _data()
    with pytest.raises(InvalidInput, match="weak_learner"):
        AdaBoost(n_estimators=2, weak_learner="toy").fit(X, y)
