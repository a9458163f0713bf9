"""JOUS-Boost (Mease, Wyner & Buja 2007): sampling, jitter, section-4 combination,
equivalence with AdaBoost at 1/2, serving and artifacts."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.utils.estimator_checks import parametrize_with_checks

from models.boosting.adaboost import AdaBoost
from models.catalog.algorithms import algorithms, get_algorithm, validate_params
from models.exceptions import ArtifactError, InvalidInput, NotFitted, TrainingError
from models.inference.artifacts import SCORER_KINDS, dump_model, load_model
from models.variants.jous import (
    JOUSBoost,
    JousScorer,
    class_sizes,
    grid_probability,
    monotone_decisions,
    quantile_grid,
    quantile_sample,
)

ROOT = Path(__file__).resolve().parents[3]
COMMON = {
    "n_estimators": 15,
    "weak_learner": "stump",
    "max_depth": 3,
    "score_kind": "vote",
    "random_state": 0,
}


def _data(n: int = 300, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    X, y = make_classification(
        n, 4, n_informative=3, n_redundant=0, flip_y=0.15, weights=[0.6], random_state=seed
    )
    return X, y


def _grid_values(delta: int) -> np.ndarray:
    return (2 * np.arange(delta) + 1) / (2 * delta)


# ------------------------------------------------------------ section 4 rule
def _section4_reference(d: np.ndarray, delta: int) -> float:
    """Section 4 literally, for one row of raw decisions d[i - 1] = D_{i/delta}."""
    qs = [i / delta for i in range(1, delta)]
    dq = dict(zip(qs, d, strict=True))
    if dq[0.5]:
        above = [q for q in qs if q > 0.5 and not dq[q]]
        return min(above) - 1 / (2 * delta) if above else 1 - 1 / (2 * delta)
    below = [q for q in qs if q < 0.5 and dq[q]]
    return max(below) + 1 / (2 * delta) if below else 1 / (2 * delta)


@pytest.mark.parametrize("delta", [2, 4, 10])
def test_combination_rule_matches_section_4_on_every_vote_pattern(delta: int) -> None:
    # All 2^(delta-1) patterns, including every non-monotone one.
    D = np.array(list(itertools.product([False, True], repeat=delta - 1)))
    expected = np.array([_section4_reference(row, delta) for row in D])
    p = grid_probability(D)
    np.testing.assert_allclose(p, expected, rtol=0, atol=1e-12)
    assert set(np.round(p, 12)) <= set(np.round(_grid_values(delta), 12))
    mono = monotone_decisions(D)
    assert not np.any(np.diff(mono.astype(int), axis=1) > 0)  # non-increasing in q
    np.testing.assert_array_equal(p > 0.5, D[:, delta // 2 - 1])  # decided by D_{1/2}
    # Already monotone patterns are left unchanged.
    monotone_rows = ~np.any(np.diff(D.astype(int), axis=1) > 0, axis=1)
    np.testing.assert_array_equal(mono[monotone_rows], D[monotone_rows])


def test_first_disagreement_from_the_median_ends_the_scan() -> None:
    # delta = 10; columns q = 0.1 .. 0.9; the median column is index 4.
    d = np.array([[1, 1, 0, 1, 1, 1, 0, 1, 1], [0, 1, 0, 0, 0, 1, 1, 0, 0]], dtype=bool)
    np.testing.assert_allclose(grid_probability(d), [0.65, 0.25])


# -------------------------------------------------------------- sampling sizes
@pytest.mark.parametrize("sampling", ["over", "under"])
def test_class_sizes_follow_section_5_1(sampling: str) -> None:
    n_pos, n_neg, delta = 37, 83, 10
    for i in range(1, delta):
        q = i / delta
        k_pos, k_neg = class_sizes(i, delta, n_pos, n_neg, sampling)
        if i * 2 == delta:
            assert (k_pos, k_neg) == (n_pos, n_neg)  # q = 1/2: the original data
        elif sampling == "over":
            assert (k_pos, k_neg) == ((delta - i) * n_pos, i * n_neg)
            # Section 3.1 step 1, exactly: k+/k- = (N+/N-) / (q/(1-q)).
            assert k_pos / k_neg == pytest.approx((n_pos / n_neg) / (q / (1 - q)), rel=1e-12)
        else:
            assert k_pos == int(np.floor((1 - q) * n_pos + 0.5))
            assert k_neg == int(np.floor(q * n_neg + 0.5))
            assert 1 <= k_pos <= n_pos and 1 <= k_neg <= n_neg


def test_under_sampling_keeps_at_least_one_row_per_class() -> None:
    assert class_sizes(1, 10, 3, 1000, "under") == (3, 100)
    assert class_sizes(9, 10, 3, 1000, "under") == (1, 900)  # 0.3 rounds to 0 -> 1


@pytest.mark.parametrize("sampling", ["over", "under"])
def test_artificial_data_sets_have_the_prescribed_class_counts(sampling: str) -> None:
    X, y = _data(200)
    n_pos, n_neg = int(y.sum()), int((1 - y).sum())
    model = JOUSBoost(delta=10, sampling=sampling, n_estimators=5, random_state=1).fit(X, y)
    for i in range(1, 10):
        sample = quantile_sample(X, y, i, 10, sampling=sampling, seed=3)
        k = class_sizes(i, 10, n_pos, n_neg, sampling)
        assert (int(sample.y.sum()), int((1 - sample.y).sum())) == k
        np.testing.assert_array_equal(sample.y, y[sample.source])  # labels are never changed
        assert tuple(model.sample_sizes_[i - 1]) == k
        if sampling == "over":  # exactly one unjittered copy of the original data
            originals = sample.source[sample.copy == 0]
            np.testing.assert_array_equal(np.sort(originals), np.arange(len(y)))
            np.testing.assert_array_equal(sample.X[sample.copy == 0], X[originals])
        else:  # drawn without replacement
            assert np.unique(sample.source).size == sample.source.size


def test_under_sampled_data_sets_are_nested() -> None:
    # Section 5.1: a data set with fewer rows of a class than a second one holds no row
    # of that class that the second lacks (the q = 1/2 set, all rows, contains them all).
    X, y = _data(200)
    sets = [quantile_sample(X, y, i, 10, sampling="under", seed=5) for i in range(1, 10)]
    for a, b in itertools.permutations(sets, 2):
        for cls in (0, 1):
            rows_a, rows_b = set(a.source[a.y == cls]), set(b.source[b.y == cls])
            if len(rows_a) <= len(rows_b):
                assert rows_a <= rows_b


def test_over_sampling_recycles_the_noise_across_quantiles() -> None:
    X, y = _data(120)
    seen: dict[tuple[int, int], np.ndarray] = {}
    for i in range(1, 10):
        s = quantile_sample(X, y, i, 10, sampling="over", nu=1.0, seed=7)
        for row, src, cp in zip(s.X, s.source, s.copy, strict=True):
            key = (int(src), int(cp))
            if key in seen:
                np.testing.assert_array_equal(row, seen[key])
            seen[key] = row


# ------------------------------------------------------------------- jitter
def _toy() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    n = 400
    X = np.column_stack([rng.normal(0, 1, n), rng.normal(5, 100, n), np.full(n, 3.0)])
    y = (rng.random(n) < 0.3).astype(int)
    return X, y


@pytest.mark.parametrize("nu", [0.25, 1.0, 2.0])
def test_jitter_is_uniform_with_half_width_nu_times_the_feature_sd(nu: float) -> None:
    X, y = _toy()
    sigma = np.std(X, axis=0, ddof=1)
    s = quantile_sample(X, y, 1, 10, sampling="over", nu=nu, seed=11)  # q = 0.1
    noise = s.X - X[s.source]
    assert np.all(noise[s.copy == 0] == 0)  # the original copy is untouched
    jit = noise[s.copy >= 1]
    assert jit.shape[0] == 8 * int(y.sum())  # positives: 9 copies, 8 jittered; negatives: 1
    assert np.all(s.copy[s.y == 0] == 0)  # the negatives are not replicated at q = 0.1
    for j in (0, 1):
        a = nu * sigma[j]
        assert np.all(np.abs(jit[:, j]) <= a)
        assert np.abs(jit[:, j]).max() > 0.98 * a  # the full width is used
        assert jit[:, j].std() == pytest.approx(a / np.sqrt(3), rel=0.05)  # U(-a, a)
        assert abs(jit[:, j].mean()) < 0.05 * a
    assert np.all(jit[:, 2] == 0)  # a constant feature has sd 0: no noise
    model = JOUSBoost(delta=4, nu=nu, n_estimators=3, random_state=0).fit(X, y)
    np.testing.assert_allclose(model.feature_std_, sigma)


def test_jitter_breaks_ties_and_nu_zero_replicates_exactly() -> None:
    X, y = _toy()
    s = quantile_sample(X, y, 9, 10, sampling="over", nu=1.0, seed=2)  # negatives x9
    assert np.unique(s.X[:, :2], axis=0).shape[0] == s.X.shape[0]
    s0 = quantile_sample(X, y, 9, 10, sampling="over", nu=0.0, seed=2)
    np.testing.assert_array_equal(s0.X, X[s0.source])
    under = quantile_sample(X, y, 9, 10, sampling="under", nu=1.0, seed=2)
    np.testing.assert_array_equal(under.X, X[under.source])  # no jitter without replicates


def test_missing_values_stay_missing_when_jittered() -> None:
    X, y = _toy()
    X[::7, 0] = np.nan
    s = quantile_sample(X, y, 1, 10, sampling="over", nu=1.0, seed=0)
    np.testing.assert_array_equal(np.isnan(s.X[:, 0]), np.isnan(X[s.source, 0]))
    p = JOUSBoost(delta=4, n_estimators=5, random_state=0).fit(X, y).predict_proba(X)
    assert np.all(np.isfinite(p))


# --------------------------------------------------------- fitted estimator
@pytest.mark.parametrize("sampling", ["over", "under"])
@pytest.mark.parametrize("delta", [2, 4, 10])
def test_estimates_take_only_grid_values(sampling: str, delta: int) -> None:
    X, y = _data()
    model = JOUSBoost(delta=delta, sampling=sampling, n_estimators=20, random_state=0)
    p = model.fit(X, y).predict_proba(X)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    assert set(np.round(p[:, 1], 12)) <= set(np.round(_grid_values(delta), 12))
    np.testing.assert_array_equal(model.quantiles_, quantile_grid(delta))
    assert len(model.estimators_) == delta - 1


@pytest.mark.parametrize("sampling", ["over", "under"])
def test_monotone_across_quantiles_and_consistent_with_p_hat(sampling: str) -> None:
    X, y = _data()
    Xt, _ = _data(500, seed=1)
    model = JOUSBoost(delta=10, sampling=sampling, n_estimators=30, random_state=0).fit(X, y)
    mono = model.quantile_decisions(Xt)
    raw = model.quantile_decisions(Xt, monotone=False)
    assert not np.any(np.diff(mono.astype(int), axis=1) > 0)  # never +1 above a -1
    np.testing.assert_array_equal(mono, monotone_decisions(raw))
    p = model.predict_proba(Xt)[:, 1]
    np.testing.assert_allclose(p, (2 * mono.sum(axis=1) + 1) / 20)


@pytest.mark.parametrize(
    ("weak_learner", "sampling"),
    [("stump", "over"), ("stump", "under"), ("tree", "over"), ("logistic", "under")],
)
def test_above_one_half_is_exactly_plain_adaboost(weak_learner: str, sampling: str) -> None:
    X, y = _data()
    Xt, _ = _data(500, seed=2)
    kw: dict[str, Any] = {
        "n_estimators": 25,
        "weak_learner": weak_learner,
        "max_depth": 2,
        "random_state": 4,
    }
    model = JOUSBoost(delta=10, sampling=sampling, **kw).fit(X, y)
    plain = AdaBoost(**kw).fit(X, y)
    median = model.estimators_[4]
    for name, arr in plain.ensemble_.to_arrays().items():  # the q = 1/2 model IS AdaBoost
        np.testing.assert_array_equal(median.ensemble_.to_arrays()[name], arr)
    for data in (X, Xt):
        np.testing.assert_array_equal(
            model.predict_proba(data)[:, 1] > 0.5, plain.predict(data) == 1
        )
        np.testing.assert_array_equal(model.predict(data), plain.predict(data))


def test_grid_thresholds_reproduce_the_monotone_quantile_classifiers() -> None:
    X, y = _data()
    model = JOUSBoost(delta=10, n_estimators=20, random_state=0).fit(X, y)
    inference = model.to_inference()
    mono = model.quantile_decisions(X)
    for i, q in enumerate(model.quantiles_):
        costs = np.array([[0.0, q], [1.0 - q, 0.0]])  # c = c_fp / (c_fp + c_fn) = q
        decided = inference.decide(X, costs).labels_index
        np.testing.assert_array_equal(decided == 1, mono[:, i])


def test_same_seed_same_model_and_string_labels() -> None:
    X, y = _data()
    labels = np.where(y == 1, "spam", "ham")
    a = JOUSBoost(delta=6, n_estimators=10, random_state=3).fit(X, labels)
    b = clone(a).fit(X, labels)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    assert a.classes_.tolist() == ["ham", "spam"] and a.n_features_in_ == 4
    assert set(a.predict(X)) <= {"ham", "spam"}
    assert a.n_estimators_ == sum(e.n_estimators_ for e in a.estimators_)
    assert a.termination_reason_ == a.estimators_[2].termination_reason_


def test_errors_name_the_problem() -> None:
    X, y = _data(60)
    with pytest.raises(NotFitted):
        JOUSBoost().predict_proba(X)
    with pytest.raises(TrainingError, match="exactly two classes"):
        JOUSBoost(delta=4).fit(X, np.zeros(60))
    with pytest.raises(InvalidInput, match="delta: expected an even integer"):
        JOUSBoost(delta=5).fit(X, y)
    with pytest.raises(InvalidInput, match="nu: expected a finite number >= 0"):
        JOUSBoost(nu=-1.0).fit(X, y)
    with pytest.raises(InvalidInput, match="sampling: expected one of"):
        JOUSBoost(sampling="smote").fit(X, y)
    model = JOUSBoost(delta=4, n_estimators=3, random_state=0).fit(X, y)
    with pytest.raises(InvalidInput, match="features"):
        model.predict_proba(X[:, :3])
    with pytest.raises(InvalidInput, match="feature_names: expected 4 names"):
        model.to_inference(["a"])


# ------------------------------------------------------- serving/artifacts
@pytest.mark.parametrize(
    ("weak_learner", "sampling"), [("stump", "over"), ("tree", "under"), ("logistic", "over")]
)
def test_round_trip_through_artifacts_is_exact(weak_learner: str, sampling: str) -> None:
    X, y = _data()
    X[::11, 1] = np.nan
    model = JOUSBoost(
        delta=10, sampling=sampling, n_estimators=10, weak_learner=weak_learner, random_state=0
    ).fit(X, y)
    inference = model.to_inference(["a", "b", "c", "d"])
    assert inference.rule == "threshold" and inference.training_costs is None
    np.testing.assert_allclose(inference.train_priors, [np.mean(y == 0), np.mean(y == 1)])
    blob, sha = dump_model(inference)
    loaded = load_model(blob, expected_sha256=sha)
    assert loaded.scorer.kind == "jous" and SCORER_KINDS["jous"] is JousScorer
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    assert loaded.feature_names == ("a", "b", "c", "d") and loaded.classes == (0, 1)
    assert loaded.metadata["jous"] == {"delta": 10, "nu": 1.0, "sampling": sampling}


def test_artifacts_module_registers_the_jous_kind_by_itself() -> None:
    # A fresh interpreter that loads artifacts without importing models.variants.jous first
    # (the service's predict path) must know the "jous" kind.
    code = "import models.inference.artifacts as s; assert 'jous' in s.SCORER_KINDS"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_malformed_jous_parts_are_refused() -> None:
    X, y = _data(100)
    scorer = JOUSBoost(delta=4, n_estimators=3, random_state=0).fit(X, y).scorer_
    spec, arrays = scorer.to_parts()
    assert JousScorer.from_parts(spec, arrays, 4).delta == 4
    bad_specs = [
        {**spec, "delta": 5},
        {**spec, "delta": "4"},
        {**spec, "ensemble_kinds": ["stumps"]},
    ]
    for bad in bad_specs:
        with pytest.raises(ArtifactError):
            JousScorer.from_parts(bad, arrays, 4)
    with pytest.raises(ArtifactError, match="unexpected arrays"):
        JousScorer.from_parts(spec, {**arrays, "q9/alphas": arrays["q1/alphas"]}, 4)
    missing = {k: v for k, v in arrays.items() if not k.startswith("q2/")}
    with pytest.raises(ArtifactError):
        JousScorer.from_parts(spec, missing, 4)


# ------------------------------------------------------------------ catalog
def test_catalog_builds_the_paper_defaults() -> None:
    assert "jous" in algorithms()
    spec = get_algorithm("jous")
    params = validate_params(spec, None)
    assert params == {"delta": 10, "nu": 1.0, "sampling": "over"}
    est = spec.build(COMMON, params)
    assert isinstance(est, JOUSBoost)
    assert (est.delta, est.nu, est.sampling, est.n_estimators, est.random_state) == (
        10,
        1.0,
        "over",
        15,
        0,
    )
    assert spec.describe()["trains_with_costs"] is False
    with pytest.raises(InvalidInput, match=r"params\.delta: expected an even integer"):
        spec.build(COMMON, validate_params(spec, {"delta": 7}))
    for bad in ({"delta": 1}, {"delta": 52}, {"nu": -0.5}, {"sampling": "both"}):
        with pytest.raises(InvalidInput):
            validate_params(spec, bad)


def test_service_path_build_fit_to_inference() -> None:
    X, y = _data()
    spec = get_algorithm("jous")
    est = spec.build(COMMON, validate_params(spec, {"delta": 4, "sampling": "under"}))
    inference = est.fit(X, y).to_inference([f"f{j}" for j in range(4)])
    # What the service records: no calibration map, and the fitted sizes.
    assert est.calibration_info_ == {
        "method": "none",
        "split": "none",
        "n_boost": 300,
        "n_calibration": 0,
    }
    assert isinstance(est.n_estimators_, int) and isinstance(est.termination_reason_, str)
    blob, _ = dump_model(inference, metadata={"algorithm": "jous"})
    np.testing.assert_array_equal(load_model(blob).predict_proba(X), est.predict_proba(X))


# ------------------------------------------------------- scikit-learn API
@parametrize_with_checks(
    [
        JOUSBoost(delta=4, n_estimators=5),
        JOUSBoost(delta=4, n_estimators=5, sampling="under"),
    ],
    expected_failed_checks=lambda est: {},
)
def test_sklearn_compatible(estimator, check) -> None:  # type: ignore[no-untyped-def]
    check(estimator)
