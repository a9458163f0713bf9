"""Probability intervals (models.uncertainty): the interval holds the served probability,
matches an independent computation from the fold boosters, and ``stable`` equals the
decision recomputed at both ends, for classes and for actions."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy.stats import t as student_t

from models.auto import AutoCalibratedBoosting
from models.decisions.actions import review_matrix
from models.decisions.rule import row_cost_matrices
from models.exceptions import NoInterval
from models.inference.model import InferenceModel
from models.multiclass.calibrated import CalibratedMulticlass
from models.multiclass.samme import SAMME
from models.uncertainty.interval import METHODS, probability_interval
from models.uncertainty.stability import stable_decisions


def _data(n: int = 500, d: int = 4, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = ((X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(scale=0.7, size=n)) > 0).astype(int)
    return X, y


@pytest.fixture(scope="module", params=["vote", "logistic"])
def model(request: pytest.FixtureRequest) -> InferenceModel:
    X, y = _data()
    fitted = AutoCalibratedBoosting(
        grid=[("tree", 3, 10)], score_kind=request.param, serve="folds", random_state=0
    ).fit(X, y)
    return fitted.to_inference(None)


def _rows(seed: int = 1, n: int = 300) -> np.ndarray:
    return np.random.default_rng(seed).normal(scale=1.5, size=(n, 4))


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("priors", [None, [0.8, 0.2]])
def test_interval_contains_the_served_probability(
    model: InferenceModel, method: str, priors: list[float] | None
) -> None:
    Z = _rows()
    served = model.decision_proba(Z, priors)[:, 1]
    iv = probability_interval(model, Z, served, priors, method=method)
    assert np.all(iv.low <= served) and np.all(served <= iv.high)
    assert np.all(iv.low >= 0.0) and np.all(iv.high <= 1.0)
    assert np.mean(iv.high - iv.low) > 1e-3  # the folds disagree somewhere
    assert iv.method == method


def test_jackknife_interval_equals_an_independent_computation(model: InferenceModel) -> None:
    """Each fold booster scored on its own, the jackknife standard error and the t
    quantile written out, mapped by the calibrator: the same ends."""
    Z = _rows(2)
    scorer = model.scorer
    s = np.column_stack([e.score(Z, scorer.score_kind) for e in scorer.ensembles])  # type: ignore[attr-defined]
    k = s.shape[1]
    mean = s.mean(axis=1)
    se = np.sqrt((k - 1) / k * ((s - mean[:, None]) ** 2).sum(axis=1))
    q = student_t.ppf(0.95, k - 1)  # level 0.9
    g = scorer.calibrator.predict  # type: ignore[attr-defined]
    served = model.predict_proba(Z)[:, 1]
    want_low = np.minimum(np.minimum(g(mean - q * se), g(mean + q * se)), served)
    want_high = np.maximum(np.maximum(g(mean - q * se), g(mean + q * se)), served)
    iv = probability_interval(model, Z, served, level=0.9)
    np.testing.assert_allclose(iv.low, want_low, rtol=0, atol=1e-12)
    np.testing.assert_allclose(iv.high, want_high, rtol=0, atol=1e-12)
    wider = probability_interval(model, Z, served, level=0.95)
    assert np.all(wider.low <= iv.low + 1e-15) and np.all(wider.high >= iv.high - 1e-15)


def test_fold_range_is_the_folds_extremes(model: InferenceModel) -> None:
    Z = _rows(3)
    scorer = model.scorer
    g = scorer.calibrator.predict  # type: ignore[attr-defined]
    p = np.column_stack([g(e.score(Z, scorer.score_kind)) for e in scorer.ensembles])  # type: ignore[attr-defined]
    served = model.predict_proba(Z)[:, 1]
    iv = probability_interval(model, Z, served, method="fold_range")
    np.testing.assert_allclose(iv.low, np.minimum(p.min(axis=1), served), atol=1e-12)
    np.testing.assert_allclose(iv.high, np.maximum(p.max(axis=1), served), atol=1e-12)


def _by_hand(p1: np.ndarray, costs: np.ndarray) -> np.ndarray:
    """argmin over decisions of p0 C[0][j] + p1 C[1][j], ties to the first (actions)."""
    c = costs if costs.ndim == 3 else np.broadcast_to(costs, (len(p1), *costs.shape))
    out = []
    for p, m in zip(p1.tolist(), c, strict=True):
        e = [(1 - p) * m[0][j] + p * m[1][j] for j in range(m.shape[1])]
        out.append(min(range(len(e)), key=e.__getitem__))
    return np.array(out)


def test_stable_equals_the_decision_recomputed_at_both_ends(model: InferenceModel) -> None:
    Z = _rows(4, 400)
    served = model.predict_proba(Z)[:, 1]
    iv = probability_interval(model, Z, served)
    rng = np.random.default_rng(5)
    amounts = rng.uniform(0.5, 20.0, size=len(Z))
    binary = row_cost_matrices(np.ones(len(Z)), amounts, None, None, n_rows=len(Z))
    # two classes, K x K: ties go to the positive class (p1 >= threshold), so compare
    # thresholds by hand rather than argmin-first
    t = binary[:, 0, 1] / (binary[:, 0, 1] + binary[:, 1, 0])
    want = (iv.low >= t) == (iv.high >= t)
    got = stable_decisions(iv.low, iv.high, binary)
    assert np.array_equal(got, want)
    assert 0 < got.sum() < len(Z)  # both kinds of rows occur
    # with a review action (per row), decided among three actions
    review = review_matrix(binary, rng.uniform(0.1, 2.0, size=len(Z)))
    want = _by_hand(iv.low, review) == _by_hand(iv.high, review)
    got = stable_decisions(iv.low, iv.high, review, actions=True)
    assert np.array_equal(got, want)
    assert 0 < got.sum() < len(Z)
    # a point interval is always stable
    assert stable_decisions(served, served, review, actions=True).all()


def test_a_model_without_fold_boosters_has_no_interval() -> None:
    X, y = _data()
    one = AutoCalibratedBoosting(grid=[("stump", 1, 10)], serve="refit", random_state=0)
    refit = one.fit(X, y).to_inference(None)
    with pytest.raises(NoInterval, match="one booster.*'auto'"):
        probability_interval(refit, X[:3], refit.predict_proba(X[:3])[:, 1])
    rng = np.random.default_rng(0)
    y3 = rng.integers(0, 3, size=len(X))
    multi = CalibratedMulticlass(SAMME(n_estimators=5)).fit(X, y3).to_inference()
    with pytest.raises(NoInterval, match="3 classes"):
        probability_interval(multi, X[:3], multi.predict_proba(X[:3])[:, 1])


def test_unknown_method_and_level_are_refused(model: InferenceModel) -> None:
    Z = _rows()
    served = model.predict_proba(Z)[:, 1]
    with pytest.raises(ValueError, match="method"):
        probability_interval(model, Z, served, method="bootstrap")
    with pytest.raises(ValueError, match="level"):
        probability_interval(model, Z, served, level=1.0)
    assert dataclasses.is_dataclass(probability_interval(model, Z, served))
