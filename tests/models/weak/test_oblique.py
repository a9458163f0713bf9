"""The oblique weak learner: sign(w.x + b) / argmax_k (w_k.x + b_k) on all features."""

from __future__ import annotations

import numpy as np
import pytest

from models.auto import AutoCalibratedBoosting, AutoCalibratedMulticlass
from models.boosting.adaboost import AdaBoost
from models.boosting.calibrated import CalibratedAdaMEC
from models.boosting.prebinned import fit_prebinned
from models.exceptions import ArtifactError, InvalidInput
from models.features.binning import BinEdges
from models.inference.artifacts import dump_model, load_model
from models.inference.ensemble import Ensemble
from models.inference.fold_ensemble import merged_votes, truncated
from models.inference.vote_ensemble import VoteEnsemble
from models.multiclass.angle import AngleAdaBoost
from models.multiclass.samme import SAMME
from models.weak.oblique import ObliqueTrainer, best_threshold, oblique_ensemble


def _rotated(n: int, seed: int, d: int = 6, noise: float = 0.0):  # type: ignore[no-untyped-def]
    """Two classes split by a hyperplane that is not aligned with any axis."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * np.arange(1, d + 1)  # unequal scales: standardising matters
    w = np.linspace(1.0, -0.7, d) / np.arange(1, d + 1)
    y = ((X @ w + 0.2 + noise * rng.normal(size=n)) > 0).astype(int)
    return X, y


def _three_classes(n: int, seed: int):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    z = X[:, 0] + X[:, 1] - 0.8 * X[:, 2]
    return X, np.digitize(z, [-0.7, 0.7])


# ------------------------------------------------------------------ the learner
def test_on_a_rotated_hyperplane_oblique_beats_stumps() -> None:
    X, y = _rotated(1500, 0)
    Xt, yt = _rotated(3000, 1)
    stumps = AdaBoost(30, weak_learner="stump").fit(X, y)
    oblique = AdaBoost(30, weak_learner="oblique").fit(X, y)
    acc_s = np.mean(stumps.predict(Xt) == yt)
    acc_o = np.mean(oblique.predict(Xt) == yt)
    assert acc_o > 0.97 and acc_o > acc_s + 0.03, (acc_o, acc_s)
    assert oblique.ensemble_.kind == "oblique"


def test_samme_with_oblique_learners_beats_stumps_on_linear_classes() -> None:
    X, y = _three_classes(1500, 0)
    Xt, yt = _three_classes(3000, 1)
    stumps = SAMME(30).fit(X, y)
    oblique = SAMME(30, weak_learner="oblique").fit(X, y)
    acc_s, acc_o = np.mean(stumps.predict(Xt) == yt), np.mean(oblique.predict(Xt) == yt)
    assert acc_o > acc_s + 0.05, (acc_o, acc_s)
    assert oblique.ensemble_.ensemble.kind == "oblique"


def test_training_outputs_are_what_the_exported_learner_predicts() -> None:
    X, y = _rotated(400, 2, noise=0.5)
    X[::7, 2] = np.nan
    ys = np.where(y == 1, 1.0, -1.0)
    trainer = ObliqueTrainer(X, ys)
    w = np.full(len(y), 1.0 / len(y))
    for _ in range(4):
        learner, h = trainer.fit_round(w)
        exported = oblique_ensemble([learner], np.ones(1), X.shape[1])
        np.testing.assert_array_equal(exported.learner_outputs(X)[:, 0], h)
        assert set(np.unique(h)) <= {-1.0, 1.0}
        eps = w[h != ys].sum()
        assert 0 < eps < 0.5
        w = w * np.exp(-0.5 * np.log((1 - eps) / eps) * ys * h)
        w /= w.sum()


def test_the_cut_is_the_least_weighted_error_by_brute_force() -> None:
    rng = np.random.default_rng(3)
    for _ in range(20):
        proj = np.round(rng.normal(size=30), 1)  # ties between values
        y01 = (rng.random(30) < 0.4).astype(float)
        w = rng.random(30)
        w /= w.sum()
        sign, thr, err = best_threshold(proj, y01, w)
        h = np.where(sign * (proj - thr) > 0, 1.0, 0.0)
        assert err == pytest.approx(float(w[h != y01].sum()))
        cuts = np.concatenate([[proj.min() - 1], np.unique(proj)])
        brute = min(
            float(w[np.where(s * (proj - c) > 0, 1.0, 0.0) != y01].sum())
            for c in cuts
            for s in (1.0, -1.0)
        )
        assert err == pytest.approx(brute)


# ------------------------------------------------------------------ missing values
def test_nan_is_the_learners_stored_training_mean() -> None:
    X, y = _rotated(600, 4, noise=0.3)
    X[::5, 1] = np.nan
    model = AdaBoost(10, weak_learner="oblique").fit(X, y)
    ens = model.ensemble_
    d = X.shape[1]
    fill = ens.arrays["fill"].reshape(-1, d)
    np.testing.assert_allclose(fill[0, 1], np.nanmean(X[:, 1]))
    np.testing.assert_allclose(fill[0, 0], X[:, 0].mean())
    row = np.array(X[0:1])
    row[0, 1] = np.nan
    h_nan = ens.learner_outputs(row)[0]
    for t in range(ens.n_learners):  # per learner: NaN acts exactly as its fill value
        filled = row.copy()
        filled[0, 1] = fill[t, 1]
        assert ens.learner_outputs(filled)[0, t] == h_nan[t]


# ------------------------------------------------------------------ serving
@pytest.mark.parametrize("family", ["binary", "samme"])
def test_scores_of_a_row_do_not_depend_on_the_batch(family: str) -> None:
    """Bit for bit: one row alone equals the same row inside a 10,000-row batch."""
    rng = np.random.default_rng(5)
    if family == "binary":
        X, y = _rotated(800, 5, d=12, noise=0.8)
        model = AdaBoost(40, weak_learner="oblique").fit(X, y)
        score = model.ensemble_.decision_function
    else:
        X, y = _three_classes(800, 5)
        model = SAMME(40, weak_learner="oblique").fit(X, y)
        score = model.ensemble_.votes
    Q = rng.normal(size=(10_000, X.shape[1])) * X.std(axis=0)
    Q[::9, 0] = np.nan
    batch = score(Q)
    for i in range(0, 10_000, 397):
        np.testing.assert_array_equal(score(Q[i : i + 1])[0], batch[i])


def test_artifact_round_trip_predicts_the_same_bits() -> None:
    X, y = _rotated(500, 6, noise=0.5)
    X[::9, 3] = np.nan
    clf = CalibratedAdaMEC(AdaBoost(25, weak_learner="oblique"), random_state=0).fit(X, y)
    blob, sha = dump_model(clf.to_inference())
    loaded = load_model(blob, sha)
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    ens = clf.to_inference().scorer.ensemble  # type: ignore[attr-defined]
    again = Ensemble.from_arrays(ens.to_arrays(), "oblique", ens.n_features)
    np.testing.assert_array_equal(again.decision_function(X), ens.decision_function(X))


def test_samme_artifact_round_trip() -> None:
    X, y = _three_classes(600, 7)
    model = AutoCalibratedMulticlass([("oblique", 1, 20)], n_folds=3, random_state=0, n_jobs=1).fit(
        X, y
    )
    blob, sha = dump_model(model.to_inference())
    np.testing.assert_array_equal(load_model(blob, sha).predict_proba(X), model.predict_proba(X))


def _one_learner(**edit: np.ndarray) -> dict[str, np.ndarray]:
    arrays = {
        "alphas": np.ones(1),
        "coef": np.zeros(4),
        "intercept": np.array([0.0, 1.0]),
        "value": np.array([-1.0, 1.0]),
        "fill": np.zeros(2),
    }
    arrays.update(edit)
    return arrays


@pytest.mark.parametrize(
    "edit, match",
    [
        ({"coef": np.zeros(3)}, "'coef' must have shape"),
        ({"fill": np.zeros(3)}, "'fill' must have shape"),
        ({"intercept": np.zeros(1), "value": np.zeros(1), "coef": np.zeros(2)}, "R >= 2"),
        ({"coef": np.array([0.0, np.inf, 0.0, 0.0])}, "'coef' must be finite"),
        ({"value": np.zeros((1, 2))}, "'value' must be 1-D"),
    ],
)
def test_malformed_oblique_arrays_are_refused(edit, match: str) -> None:  # type: ignore[no-untyped-def]
    Ensemble.from_arrays(_one_learner(), "oblique", 2)  # the unedited layout is valid
    with pytest.raises(ArtifactError, match=match):
        Ensemble.from_arrays(_one_learner(**edit), "oblique", 2)


def test_votes_refuse_outputs_that_are_not_class_indices() -> None:
    ens = Ensemble.from_arrays(_one_learner(), "oblique", 2)  # values -1, +1
    with pytest.raises(ArtifactError, match="class indices"):
        VoteEnsemble(ens, 2)


# ------------------------------------------------------------------ where it is refused
def test_angle_based_boosting_refuses_the_oblique_learner() -> None:
    X, y = _three_classes(200, 8)
    with pytest.raises(InvalidInput, match="weak_learner 'oblique'"):
        AngleAdaBoost(n_estimators=3, weak_learner="oblique").fit(X, y)


def test_pre_binned_training_refuses_the_oblique_learner() -> None:
    X, y = _rotated(300, 9)
    edges = BinEdges.from_sample(X)
    with pytest.raises(InvalidInput, match="pre-binned"):
        fit_prebinned(AdaBoost(3, weak_learner="oblique"), edges.encode(X), y, edges)


# ------------------------------------------------------------------ fold ensemble, auto
def test_fold_ensemble_truncates_and_merges_oblique_boosters() -> None:
    X, y = _rotated(400, 10, noise=0.8)
    long = AdaBoost(20, weak_learner="oblique").fit(X, y)
    short = AdaBoost(7, weak_learner="oblique").fit(X, y)
    cut = truncated(long.ensemble_, 7)
    for name, arr in short.ensemble_.to_arrays().items():
        np.testing.assert_array_equal(cut.to_arrays()[name], arr)
    other = AdaBoost(9, weak_learner="oblique").fit(X[::2], y[::2]).ensemble_
    merged = merged_votes((cut, other))
    np.testing.assert_allclose(
        merged.vote_fraction(X), (cut.vote_fraction(X) + other.vote_fraction(X)) / 2, atol=1e-12
    )


def test_auto_chooses_oblique_on_linear_data_and_serves_it_through_an_artifact() -> None:
    X, y = _rotated(600, 11, noise=0.3)
    model = AutoCalibratedBoosting(
        [("stump", 1, 60), ("tree", 3, 30), ("oblique", 1, 20)], n_folds=3, random_state=0,
        n_jobs=1,
    ).fit(X, y)  # fmt: skip
    assert model.capacity_["weak_learner"] == "oblique"
    assert [c["weak_learner"] for c in model.capacity_["curves"]][-1] == "oblique"
    blob, sha = dump_model(model.to_inference())
    np.testing.assert_array_equal(load_model(blob, sha).predict_proba(X), model.predict_proba(X))


def test_auto_keeps_its_axis_aligned_choice_where_oblique_does_not_win() -> None:
    rng = np.random.default_rng(12)
    X = rng.uniform(-1, 1, size=(800, 3))
    y = ((X[:, 0] > 0) ^ (X[:, 1] > 0)).astype(int)  # XOR: no hyperplane helps
    grid = [("stump", 1, 60), ("tree", 3, 30)]
    without = AutoCalibratedBoosting(grid, n_folds=3, random_state=0, n_jobs=1).fit(X, y)
    with_ob = AutoCalibratedBoosting(
        [*grid, ("oblique", 1, 20)], n_folds=3, random_state=0, n_jobs=1
    ).fit(X, y)
    assert with_ob.capacity_["weak_learner"] == without.capacity_["weak_learner"] == "tree"
    assert with_ob.capacity_["n_estimators"] == without.capacity_["n_estimators"]
    assert with_ob.capacity_["curves"][-1]["weak_learner"] == "oblique"  # it was tried
    np.testing.assert_array_equal(with_ob.predict_proba(X), without.predict_proba(X))


def test_auto_does_not_offer_oblique_on_large_data(monkeypatch: pytest.MonkeyPatch) -> None:
    import models.auto.grid as auto  # the module that reads the cap

    monkeypatch.setattr(auto, "OBLIQUE_MAX_CELLS", 100)
    X, y = _rotated(300, 13)
    model = AutoCalibratedBoosting(
        [("stump", 1, 20), ("oblique", 1, 10)], n_folds=3, random_state=0, n_jobs=1
    ).fit(X, y)
    assert [c["weak_learner"] for c in model.capacity_["curves"]] == ["stump"]


def test_auto_counts_one_oblique_fit_per_class_against_the_cap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With K > 2 classes every round fits K logistic directions: the cap counts them."""
    import models.auto.grid as auto  # the module that reads the cap
    from models.auto import AutoCalibratedMulticlass

    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 4))
    y = np.argmax(X[:, :3] + rng.normal(scale=0.3, size=(300, 3)), axis=1)
    grid = [("stump", 1, 10), ("oblique", 1, 5)]
    monkeypatch.setattr(auto, "OBLIQUE_MAX_CELLS", 300 * 4 * 3)  # rows x features x 3 fits
    tried = AutoCalibratedMulticlass(grid, n_folds=3, random_state=0).fit(X, y)
    assert [c["weak_learner"] for c in tried.capacity_["curves"]] == ["stump", "oblique"]
    monkeypatch.setattr(auto, "OBLIQUE_MAX_CELLS", 300 * 4 * 3 - 1)
    skipped = AutoCalibratedMulticlass(grid, n_folds=3, random_state=0).fit(X, y)
    assert [c["weak_learner"] for c in skipped.capacity_["curves"]] == ["stump"]
