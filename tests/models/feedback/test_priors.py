"""Tests for models.feedback.priors: EM estimation of deployment priors under simulated label shift."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from models import AdaBoost, CalibratedBoosting
from models.decisions.rule import apply_prior_shift
from models.exceptions import InvalidInput, InvalidPriors
from models.feedback.priors import estimate_priors

MEANS = np.array([[0.0, 0.0], [1.5, 0.5], [0.0, 2.0]])


def _sample(priors: np.ndarray, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian classes N(MEANS[k], I) drawn with the given class priors."""
    k = len(priors)
    y = rng.choice(k, size=n, p=priors)
    return MEANS[:k][y] + rng.normal(size=(n, 2)), y


def _bayes_posterior(x: np.ndarray, priors: np.ndarray) -> np.ndarray:
    """The exact posterior under ``priors`` (perfectly calibrated)."""
    k = len(priors)
    log_dens = -0.5 * ((x[:, None, :] - MEANS[:k][None]) ** 2).sum(axis=2)
    w = np.exp(log_dens) * priors
    return w / w.sum(axis=1, keepdims=True)


@pytest.mark.parametrize(
    ("train", "deploy"),
    [
        ([0.5, 0.5], [0.85, 0.15]),
        ([0.5, 0.5], [0.3, 0.7]),
        ([0.2, 0.8], [0.6, 0.4]),
        ([1 / 3, 1 / 3, 1 / 3], [0.6, 0.3, 0.1]),
        ([0.5, 0.3, 0.2], [0.1, 0.2, 0.7]),
    ],
)
def test_em_recovers_true_priors_under_label_shift(train: list, deploy: list) -> None:
    rng = np.random.default_rng(0)
    pt, pd = np.array(train), np.array(deploy)
    x, y = _sample(pd, 20000, rng)
    est = estimate_priors(_bayes_posterior(x, pt), pt)
    assert est.converged and est.n_rows == 20000
    np.testing.assert_allclose(est.priors, pd, atol=0.02)
    # closer than the naive estimate (the mean of the unadjusted posteriors)
    naive = _bayes_posterior(x, pt).mean(axis=0)
    assert np.abs(est.priors - pd).max() < np.abs(naive - pd).max()
    assert est.p_value < 1e-6  # the priors did change


def test_em_fixed_point_is_self_consistent() -> None:
    rng = np.random.default_rng(1)
    pt = np.array([0.5, 0.5])
    x, _ = _sample(np.array([0.8, 0.2]), 3000, rng)
    proba = _bayes_posterior(x, pt)
    est = estimate_priors(proba, pt, tol=1e-12)
    # Eq. 2.10 at convergence: the mean adjusted posterior equals the estimated prior
    adjusted = apply_prior_shift(proba, pt, est.priors)
    np.testing.assert_allclose(adjusted.mean(axis=0), est.priors, atol=1e-9)


def test_likelihood_ratio_test_without_shift_is_uniform() -> None:
    rng = np.random.default_rng(2)
    pt = np.array([0.5, 0.5])
    pv = []
    for _ in range(300):
        x, _ = _sample(pt, 400, rng)
        pv.append(estimate_priors(_bayes_posterior(x, pt), pt).p_value)
    assert stats.kstest(pv, "uniform").pvalue > 0.01


def test_em_on_a_fitted_calibrated_booster() -> None:
    rng = np.random.default_rng(3)
    pt = np.array([0.5, 0.5])
    x_tr, y_tr = _sample(pt, 4000, rng)
    model = CalibratedBoosting(AdaBoost(n_estimators=60), random_state=0).fit(x_tr, y_tr)
    np.testing.assert_allclose(model.class_priors_, pt, atol=0.03)
    x_dep, _ = _sample(np.array([0.9, 0.1]), 8000, rng)
    est = estimate_priors(model.predict_proba(x_dep), model.class_priors_)
    assert abs(est.priors[1] - 0.1) < 0.03


def test_class_absent_from_traffic_tends_to_zero_but_stays_valid() -> None:
    rng = np.random.default_rng(4)
    pt = np.array([0.5, 0.5])
    x, _ = _sample(np.array([1.0, 0.0]), 2000, rng)
    est = estimate_priors(_bayes_posterior(x, pt), pt)
    assert est.priors[1] < 0.03 and np.all(est.priors > 0)
    apply_prior_shift(_bayes_posterior(x, pt), pt, est.priors)  # valid priors


def test_iteration_limit_reports_not_converged() -> None:
    rng = np.random.default_rng(5)
    x, _ = _sample(np.array([0.9, 0.1]), 500, rng)
    est = estimate_priors(_bayes_posterior(x, np.array([0.5, 0.5])), [0.5, 0.5], max_iter=2)
    assert est.n_iter == 2 and not est.converged


@pytest.mark.parametrize(
    ("proba", "priors", "kwargs", "error", "match"),
    [
        ([[0.5, 0.5]], [0.5, 0.3, 0.2], {}, InvalidPriors, "expected 2 values"),
        ([[0.5, 0.5]], [1.0, 0.0], {}, InvalidPriors, "> 0"),
        ([[0.5, 0.6]], [0.5, 0.5], {}, InvalidInput, "row 0 sums"),
        (np.zeros((0, 2)), [0.5, 0.5], {}, InvalidInput, "at least one row"),
        ([[0.5, 0.5]], [0.5, 0.5], {"max_iter": 0}, InvalidInput, "max_iter"),
        ([[0.5, 0.5]], [0.5, 0.5], {"tol": -1.0}, InvalidInput, "tol"),
    ],
)
def test_bad_inputs(proba, priors, kwargs, error, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error, match=match):
        estimate_priors(proba, priors, **kwargs)
