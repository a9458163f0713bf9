"""Explanations (models.inference.explanation): per-feature contributions that sum to the
served raw score, for every layout and weak learner the default can choose."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from models.auto import AutoCalibratedBoosting
from models.calibration.calibrators import make_calibrator
from models.exceptions import NotExplainable
from models.inference.ensemble import Ensemble
from models.inference.explanation import cost_margin, explain
from models.inference.fold_ensemble import FoldEnsembleScorer
from models.inference.layouts import ENSEMBLE_LAYOUTS, get_layout, register_layout
from models.inference.model import InferenceModel
from models.inference.scorers import BinaryScorer
from models.multiclass.calibrated import CalibratedMulticlass
from models.multiclass.samme import SAMME
from models.variants.jous import JOUSBoost

TOL = 1e-9


def _data(n: int = 600, d: int = 5, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = ((X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(scale=0.5, size=n)) > 0).astype(int)
    X[::7, 3] = np.nan
    return X, y


def _assert_sums(bias: np.ndarray, contrib: np.ndarray, score: np.ndarray) -> None:
    """bias + sum(contributions) == score within TOL relative to the terms summed (the
    scale of the sum's rounding; the score is in [0, 1])."""
    recon = bias + contrib.sum(axis=1)
    scale = np.maximum(np.abs(bias) + np.abs(contrib).sum(axis=1), np.abs(score))
    worst = float(np.max(np.abs(recon - score) / scale))
    assert worst <= TOL, worst


# the default's grid (models.auto.grid.DEFAULT_GRID, fewer rounds) and the univariate
# logistic learner (stored as stumps); both raw scores; served by folds and refitted
DEFAULT_ENTRIES = [("stump", 1, 30), ("tree", 3, 12), ("tree", 6, 8), ("oblique", 1, 8)]


@pytest.mark.parametrize("entry", [*DEFAULT_ENTRIES, ("logistic", 1, 10)])
@pytest.mark.parametrize("score_kind", ["vote", "logistic"])
@pytest.mark.parametrize("serve", ["folds", "refit"])
def test_default_model_explanations_sum_to_the_served_score(
    entry: tuple[str, int, int], score_kind: str, serve: str
) -> None:
    X, y = _data()
    fitted = AutoCalibratedBoosting(
        grid=[entry], score_kind=score_kind, serve=serve, random_state=0
    ).fit(X, y)
    model = fitted.to_inference([f"f{j}" for j in range(X.shape[1])])
    expected = FoldEnsembleScorer if serve == "folds" else BinaryScorer
    assert isinstance(model.scorer, expected)
    rng = np.random.default_rng(1)
    Z = rng.normal(scale=2.0, size=(300, X.shape[1]))
    Z[rng.random(Z.shape) < 0.1] = np.nan
    e = explain(model, Z)
    proba, raw = model.scored_proba(Z)
    assert np.array_equal(e.score, raw)  # the score explained is the one served
    assert np.array_equal(e.proba, proba)
    assert e.contributions.shape == Z.shape
    _assert_sums(e.bias, e.contributions, e.score)
    assert np.abs(e.contributions).sum() > 0  # something moved the scores


def _grow(nodes: list[list[float]], rng: np.random.Generator, d: int, room: int) -> int:
    """Append a random tree of depth <= ``room`` to ``nodes`` (preorder); its root index."""
    i = len(nodes)
    nodes.append([-1, 0.0, -1, -1, 0, 0.0])
    if room > 0 and rng.random() < 0.8:
        nodes[i][0] = int(rng.integers(d))
        nodes[i][1] = float(rng.normal())
        nodes[i][4] = int(rng.integers(2))
        nodes[i][2] = _grow(nodes, rng, d, room - 1)
        nodes[i][3] = _grow(nodes, rng, d, room - 1)
    else:
        nodes[i][5] = float(rng.normal())
    return i


def _random_trees(rng: np.random.Generator, m: int, d: int, depth: int) -> Ensemble:
    feats, thr, lefts, rights, miss, vals, offsets = [], [], [], [], [], [], [0]
    for _ in range(m):
        nodes: list[list[float]] = []
        _grow(nodes, rng, d, depth)
        for f, t, left, right, ms, v in nodes:
            feats.append(f), thr.append(t), lefts.append(left), rights.append(right)
            miss.append(ms), vals.append(v)
        offsets.append(offsets[-1] + len(nodes))
    arrays = {
        "node_feature": np.array(feats, dtype=np.int32),
        "node_threshold": np.array(thr),
        "node_left": np.array(lefts, dtype=np.int32),
        "node_right": np.array(rights, dtype=np.int32),
        "node_missing_left": np.array(miss, dtype=np.uint8),
        "node_value": np.array(vals),
        "tree_offsets": np.array(offsets, dtype=np.int64),
    }
    return Ensemble("trees", rng.uniform(0.1, 2.0, size=m), arrays, d)


def _random_ensemble(kind: str, rng: np.random.Generator, m: int = 40, d: int = 6) -> Ensemble:
    alphas = rng.uniform(0.05, 2.0, size=m)
    if kind == "trees":
        return _random_trees(rng, m, d, depth=4)
    if kind == "stumps":
        arrays = {
            "feature": rng.integers(d, size=m).astype(np.int32),
            "threshold": rng.normal(size=m),
            **{n: rng.normal(size=m) for n in ("value_left", "value_right", "value_missing")},
        }
    elif kind == "linear":
        arrays = {
            "feature": rng.integers(d, size=m).astype(np.int32),
            **{n: rng.normal(size=m) for n in ("slope", "intercept", "value_missing")},
        }
    else:  # oblique, two functions: the first zero, values (-1, +1)
        coef = np.zeros((m, 2, d))
        coef[:, 1] = rng.normal(size=(m, d))
        intercept = np.zeros((m, 2))
        intercept[:, 1] = rng.normal(size=m)
        value = np.tile([-1.0, 1.0], (m, 1))
        arrays = {
            "coef": coef.ravel(),
            "intercept": intercept.ravel(),
            "value": value.ravel(),
            "fill": rng.normal(scale=0.3, size=m * d),
        }
    return Ensemble(kind, alphas, arrays, d)


@pytest.mark.parametrize("kind", ["stumps", "trees", "linear", "oblique"])
@pytest.mark.parametrize("score_kind", ["vote", "logistic"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_layout_sums_to_its_score_on_random_ensembles(
    kind: str, score_kind: str, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    ens = _random_ensemble(kind, rng)
    X = rng.normal(size=(5000, ens.n_features))
    X[rng.random(X.shape) < 0.05] = np.nan
    bias, contrib = ens.explain_score(X, score_kind)
    _assert_sums(bias, contrib, ens.score(X, score_kind))
    b_f, c_f = ens.explain(X, "F")  # and the additive sums themselves
    _assert_sums(np.full(len(X), b_f), c_f, ens.decision_function(X))


@pytest.mark.parametrize("kind", ["stumps", "trees", "linear", "oblique"])
def test_fold_ensembles_of_random_ensembles_sum_to_the_mean_score(kind: str) -> None:
    rng = np.random.default_rng(5)
    folds = tuple(_random_ensemble(kind, rng) for _ in range(3))
    X = rng.normal(size=(2000, 6))
    for score_kind in ("vote", "logistic"):
        scorer = FoldEnsembleScorer(folds, score_kind, make_calibrator("platt"))
        bias, contrib = scorer.explain_raw(X)
        _assert_sums(bias, contrib, scorer.raw_score(X))


def test_stump_terms_go_to_their_feature_only() -> None:
    """Independent computation: each stump's alpha (h(x) - mean of its two branch values)
    added to its feature, in a Python loop; an unused feature gets exactly 0."""
    rng = np.random.default_rng(7)
    ens = _random_ensemble("stumps", rng, m=12, d=4)
    arrays = dict(ens.to_arrays())
    arrays["feature"] = np.where(arrays["feature"] == 3, 0, arrays["feature"]).astype(np.int32)
    ens = Ensemble.from_arrays(arrays, "stumps", 4)
    X = rng.normal(size=(20, 4))
    X[3, 1] = np.nan
    bias, contrib = ens.explain(X, "F")
    a = ens.arrays
    expected = np.zeros_like(contrib)
    for i, x in enumerate(X):
        for t in range(ens.n_learners):
            j = a["feature"][t]
            v = x[j]
            h = (
                a["value_missing"][t]
                if np.isnan(v)
                else (a["value_left"][t] if v <= a["threshold"][t] else a["value_right"][t])
            )
            ref = (a["value_left"][t] + a["value_right"][t]) / 2
            expected[i, j] += ens.alphas[t] * (h - ref)
    np.testing.assert_allclose(contrib, expected, rtol=1e-12, atol=1e-12)
    assert np.all(contrib[:, 3] == 0.0)
    assert bias == pytest.approx(float(ens.alphas @ (a["value_left"] + a["value_right"]) / 2))


def test_tree_path_attribution_matches_a_hand_walk() -> None:
    """Saabas along the path: value(child) - value(node) to the node's feature, inner
    values the mean of the children's; computed here by walking each row by hand."""
    rng = np.random.default_rng(11)
    ens = _random_trees(rng, 6, 5, depth=3)
    a, off = ens.arrays, ens.arrays["tree_offsets"]
    X = rng.normal(size=(30, 5))
    X[::4, 2] = np.nan
    bias, contrib = ens.explain(X, "F")
    expected = np.zeros_like(contrib)
    expected_bias = 0.0
    for t in range(ens.n_learners):
        o = int(off[t])

        def value(n: int, o: int = o) -> float:
            if a["node_feature"][o + n] == -1:
                return float(a["node_value"][o + n])
            return (value(int(a["node_left"][o + n])) + value(int(a["node_right"][o + n]))) / 2

        expected_bias += ens.alphas[t] * value(0)
        for i, x in enumerate(X):
            n = 0
            while a["node_feature"][o + n] != -1:
                f = int(a["node_feature"][o + n])
                v = x[f]
                go_left = (
                    bool(a["node_missing_left"][o + n])
                    if np.isnan(v)
                    else (v <= a["node_threshold"][o + n])
                )
                child = int(a["node_left"][o + n] if go_left else a["node_right"][o + n])
                expected[i, f] += ens.alphas[t] * (value(child) - value(n))
                n = child
    np.testing.assert_allclose(contrib, expected, rtol=1e-12, atol=1e-12)
    assert bias == pytest.approx(expected_bias, rel=1e-12)


def test_oblique_moves_are_shared_by_split_terms() -> None:
    """One oblique learner: a row on the other side of the hyperplane from the fill point
    moves the score by 2 alpha, shared in proportion to w_j (x_j - mu_j)."""
    rng = np.random.default_rng(2)
    ens = _random_ensemble("oblique", rng, m=1, d=3)
    d = ens._derived
    w, mu = d["coef"][0, 1], d["fill"][0]
    X = rng.normal(scale=3.0, size=(200, 3))
    bias, contrib = ens.explain(X, "F")
    h = ens.learner_outputs(X)[:, 0]
    ref = 1.0 if (w @ mu + d["intercept"][0, 1]) > 0 else -1.0
    assert bias == pytest.approx(ens.alphas[0] * ref)
    moved = h != ref
    assert moved.any() and (~moved).any()
    assert np.all(contrib[~moved] == 0.0)
    terms = (X[moved] - mu) * w
    share = terms / terms.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(contrib[moved], (2 * ens.alphas[0] * h[moved])[:, None] * share)


def test_multiclass_and_layouts_without_attribution_are_refused() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = rng.integers(3, size=300)
    multi = CalibratedMulticlass(SAMME(n_estimators=5)).fit(X, y).to_inference()
    with pytest.raises(NotExplainable, match="two-class models; this model has 3 classes"):
        explain(multi, X)
    jous = JOUSBoost(delta=4, n_estimators=5, random_state=0).fit(X, y > 0).to_inference()
    with pytest.raises(NotExplainable, match="scorer .*has no exact attribution"):
        explain(jous, X)
    name = "stumps-without-attribution"
    register_layout(dataclasses.replace(get_layout("stumps"), name=name, explain=None))
    try:
        ens = _random_ensemble("stumps", rng, d=3)
        plain = Ensemble(name, ens.alphas, dict(ens.arrays), 3)
        calibrator = make_calibrator("platt").fit(rng.random(50), rng.integers(2, size=50))
        model = InferenceModel(
            classes=(0, 1),
            feature_names=None,
            scorer=BinaryScorer(plain, "vote", calibrator),
            train_priors=np.array([0.5, 0.5]),
        )
        model.predict_proba(X)  # it serves, but cannot explain
        with pytest.raises(NotExplainable, match=f"'{name}' ensemble layout has no exact"):
            explain(model, X)
    finally:
        ENSEMBLE_LAYOUTS.pop(name, None)


def test_cost_margin_is_the_gap_to_the_second_best_decision() -> None:
    rng = np.random.default_rng(4)
    p1 = rng.random(50)
    proba = np.column_stack([1 - p1, p1])
    costs = np.array([[0.0, 3.0], [7.0, 0.0]])
    margin = cost_margin(proba, costs)
    np.testing.assert_allclose(margin, np.abs(proba[:, 1] * 7.0 - proba[:, 0] * 3.0))
    per_row = rng.uniform(0, 5, size=(50, 2, 4))  # four actions
    expected = np.array(
        [np.sort(p @ c)[1] - np.sort(p @ c)[0] for p, c in zip(proba, per_row, strict=True)]
    )
    np.testing.assert_allclose(cost_margin(proba, per_row), expected)
    assert cost_margin(np.array([[0.5, 0.5]]), np.array([[0.0, 1.0], [1.0, 0.0]]))[0] == 0.0
