"""One tie rule everywhere: F(x) = 0, or p = threshold, decides the POSITIVE class.

The README's convention ("predict positive iff p1 >= t") is what ``decide`` and the
served models apply; every binary estimator's own ``predict`` (and ``staged_predict``)
must agree at an exact tie. The tie is made exact by giving a fitted estimator an
ensemble of two opposite constant stumps with equal weights: F(x) = a - a = 0.
"""

from __future__ import annotations

import numpy as np
import pytest

from models.catalog.algorithms import algorithms, validate_params
from models.decisions.rule import binary_threshold, decide
from models.weak.base import Stump, stumps_ensemble

BINARY = sorted(n for n, s in algorithms().items() if s.family == "binary")


def _data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    y = (X[:, 0] + 0.5 * rng.normal(size=120) > 0).astype(int)
    return X, y


def _tie_ensemble(n_features: int):  # type: ignore[no-untyped-def]
    plus = Stump(0, 0.0, 1.0, 1.0, 1.0)
    minus = Stump(0, 0.0, -1.0, -1.0, -1.0)
    return stumps_ensemble([plus, minus], np.array([0.7, 0.7]), n_features)


@pytest.mark.parametrize("name", BINARY)
def test_f_zero_decides_positive(name: str) -> None:
    spec = algorithms()[name]
    common = {"n_estimators": 5, "weak_learner": "stump", "max_depth": 3,
              "score_kind": "vote", "random_state": 0}  # fmt: skip
    est = spec.build(common, validate_params(spec, {}))
    X, y = _data()
    est.fit(X, y)
    if not hasattr(est, "ensemble_"):  # JOUS: p_hat is an odd multiple of 1/(2 delta), never 1/2
        assert name == "jous"
        assert np.all(est.predict_proba(X)[:, 1] != 0.5)
        return
    est.ensemble_ = _tie_ensemble(X.shape[1])
    assert np.all(est.decision_function(X) == 0.0)
    assert np.all(est.predict(X) == est.classes_[1])
    *_, last = est.staged_predict(X)
    assert np.all(last == est.classes_[1])


def test_p_at_the_threshold_decides_positive() -> None:
    t = binary_threshold(c_fp=1.0, c_fn=3.0)  # 0.25, exact in binary floating point
    proba = np.array([[1 - t, t], [0.8, 0.2], [0.7, 0.3]])
    d = decide(proba, np.array([[0.0, 1.0], [3.0, 0.0]]))
    assert d.labels_index.tolist() == [1, 0, 1]
