"""Fold ensembles: the default model serves its k cross-fitting boosters (no refit)."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest

from models.auto import AutoCalibrated, AutoCalibratedBoosting
from models.auto.params import CALIBRATION_CHOICES
from models.boosting.adaboost import AdaBoost
from models.boosting.crossfit import fold_indices
from models.calibration.calibrators import make_calibrator
from models.exceptions import ArtifactError
from models.feedback.recalibration import recalibrate
from models.inference.artifacts import MULTI_FORMAT_VERSION, dump_model, load_model
from models.inference.fold_ensemble import (
    FoldEnsembleScorer,
    FoldVoteBoosters,
    merged_votes,
    truncated,
)
from models.multiclass.samme import SAMME
from tests.models.conftest import rezip

GRID = (("stump", 1, 40), ("tree", 3, 20))


def _data(n: int = 500, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = ((X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(scale=0.5, size=n)) > 0).astype(int)
    X[::11, 3] = np.nan
    return X, y


def _manifest(blob: bytes) -> dict:
    return json.loads(zipfile.ZipFile(io.BytesIO(blob)).read("manifest.json"))


@pytest.mark.parametrize("weak_learner", ["stump", "tree"])
def test_truncating_a_booster_is_fitting_it_with_fewer_rounds(weak_learner: str) -> None:
    X, y = _data()
    long = AdaBoost(30, weak_learner=weak_learner, max_depth=3, random_state=0).fit(X, y)
    short = AdaBoost(12, weak_learner=weak_learner, max_depth=3, random_state=0).fit(X, y)
    cut = truncated(long.ensemble_, 12)
    assert cut.n_learners == 12 and cut.kind == short.ensemble_.kind
    for name, arr in short.ensemble_.to_arrays().items():
        np.testing.assert_array_equal(cut.to_arrays()[name], arr)
    assert truncated(long.ensemble_, 500) is long.ensemble_  # never more than it has


def test_the_default_serves_the_mean_fold_score_through_the_out_of_fold_map() -> None:
    X, y = _data()
    model = AutoCalibrated(GRID, random_state=0).fit(X, y)
    inf = model.to_inference()
    scorer = inf.scorer
    assert isinstance(scorer, FoldEnsembleScorer) and scorer.n_folds == 5
    assert inf.metadata == {"served": "fold_ensemble", "n_folds": 5}
    assert model.calibration_info_["served"] == "fold_ensemble"
    assert model.n_estimators_ == model.capacity_["n_estimators"]
    Xt, _ = _data(200, seed=1)
    mean = np.mean([e.score(Xt, "vote") for e in scorer.ensembles], axis=0)
    np.testing.assert_allclose(scorer.raw_score(Xt), mean, rtol=0, atol=1e-12)
    p1 = model.model_.calibrator_.predict(scorer.raw_score(Xt))
    np.testing.assert_array_equal(model.predict_proba(Xt)[:, 1], p1)
    np.testing.assert_array_equal(inf.predict_proba(Xt), model.predict_proba(Xt))
    # the raw score logged with a prediction is the one the map took
    proba, raw = inf.scored_proba(Xt)
    assert raw is not None and raw.shape == (200,)
    np.testing.assert_array_equal(proba, inf.predict_proba(Xt))


def _noisy(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Labels drawn from a logistic model with an interaction: depth-3 trees fitted on a
    few hundred rows disagree from fold to fold, so their mean is much less noisy."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    f = X[:, 0] + X[:, 1] * X[:, 2] + 0.5 * X[:, 3]
    return X, (rng.random(n) < 1.0 / (1.0 + np.exp(-1.5 * f))).astype(int)


def _slope(p: np.ndarray, y: np.ndarray) -> float:
    """The calibration slope: ``b`` of the logistic regression ``y ~ a + b logit(p)``."""
    from sklearn.linear_model import LogisticRegression

    q = np.clip(p, 1e-6, 1 - 1e-6)
    z = np.log(q) - np.log1p(-q)
    return float(LogisticRegression(C=np.inf).fit(z[:, None], y).coef_[0, 0])


def test_the_served_map_is_spread_for_the_mean_and_better_calibrated_than_without() -> None:
    # the map fitted on single boosters' out-of-fold scores, applied to the mean of the k
    # scores, is under-confident on new rows (slope > 1); the served map, spread for the
    # mean, is nearer slope 1, on each of two training samples
    Xt, yt = _noisy(20000, seed=99)
    for seed in (0, 1):
        X, y = _noisy(800, seed)
        model = AutoCalibratedBoosting([("tree", 3, 40)], random_state=seed, n_jobs=1).fit(X, y)
        raw = model.to_inference().scorer.raw_score(Xt)
        unspread = make_calibrator("platt").fit(model.oof_.raw_positive, y).predict(raw)
        served = model.predict_proba(Xt)[:, 1]
        assert model.capacity_["score_spread"]["factor"] > 1.0
        assert model.calibration_info_["score_spread"] == model.capacity_["score_spread"]
        before, after = _slope(unspread, yt), _slope(served, yt)
        assert before > 1.0 and abs(after - 1.0) < abs(before - 1.0), (before, after)


def test_auto_calibration_chooses_by_out_of_fold_log_loss_and_records_it() -> None:
    X, y = _data()
    model = AutoCalibratedBoosting(GRID, calibration="auto", random_state=0).fit(X, y)
    choice = model.capacity_["calibration"]
    losses = choice["oof_log_loss"]
    assert set(losses) == set(CALIBRATION_CHOICES) and choice["by"] == "out-of-fold log loss"
    assert choice["chosen"] == min(losses, key=losses.__getitem__)
    assert model.calibrator_.method == choice["chosen"] == model.calibration_info_["method"]
    assert model.calibration_info_["choice"] == choice
    # the reported out-of-fold probabilities are the chosen map's, whose loss chose it
    p = np.clip(model.oof_.positive, 1e-15, 1.0)
    loss = -np.mean(np.where(y == 1, np.log(p), np.log1p(-np.minimum(p, 1 - 1e-15))))
    assert loss == pytest.approx(losses[choice["chosen"]], abs=1e-5)
    fixed = AutoCalibratedBoosting(GRID, random_state=0).fit(X, y)
    assert "calibration" not in fixed.capacity_ and fixed.calibration_info_["method"] == "platt"


def test_a_beta_fold_ensemble_round_trips_with_its_spread() -> None:
    X, y = _data()
    model = AutoCalibratedBoosting(GRID, calibration="beta", random_state=0).fit(X, y)
    inf = model.to_inference()
    state = inf.scorer.calibrator.to_state()
    assert state["method"] == "beta"
    assert state.get("factor", 1.0) == model.capacity_["score_spread"]["factor"]
    blob, sha = dump_model(inf)
    loaded = load_model(blob, expected_sha256=sha)
    assert loaded.predict_proba(X).tobytes() == inf.predict_proba(X).tobytes()
    assert dump_model(loaded)[0] == blob


def test_a_venn_abers_fold_ensemble_trains_saves_loads_and_serves() -> None:
    X, y = _data()
    model = AutoCalibratedBoosting(GRID, calibration="venn_abers", random_state=0).fit(X, y)
    inf = model.to_inference()
    cal = inf.scorer.calibrator
    assert cal.to_state()["method"] == "venn_abers"
    # the served map is the fitted one on the spread mean fold score
    scorer = inf.scorer
    assert isinstance(scorer, FoldEnsembleScorer)
    mean = np.mean([e.score(X, scorer.score_kind) for e in scorer.ensembles], axis=0)
    fitted = make_calibrator("venn_abers").fit(model.oof_.raw[:, 1], y)
    sp = model.capacity_["score_spread"]
    spread_mean = sp["center"] + sp["factor"] * (mean - sp["center"])
    np.testing.assert_allclose(inf.predict_proba(X)[:, 1], fitted.predict(spread_mean), atol=1e-12)
    blob, sha = dump_model(inf, metadata={"algorithm": "auto"})
    assert not [n for n in zipfile.ZipFile(io.BytesIO(blob)).namelist() if n.endswith(".pkl")]
    loaded = load_model(blob, expected_sha256=sha)
    Xt, _ = _data(200, seed=3)
    assert loaded.predict_proba(Xt).tobytes() == inf.predict_proba(Xt).tobytes()
    assert np.all((loaded.predict_proba(Xt) > 0) & (loaded.predict_proba(Xt) < 1))
    assert dump_model(loaded)[0] == blob
    # the decision at request time uses the served probabilities
    p1 = loaded.predict_proba(Xt)[:, 1]
    labels = loaded.decide(Xt, np.array([[0.0, 1.0], [4.0, 0.0]])).labels_index
    np.testing.assert_array_equal(labels, (p1 >= 0.2).astype(int))


def test_fold_ensemble_predictions_are_batch_invariant_to_the_last_bit() -> None:
    X, y = _data()
    inf = AutoCalibratedBoosting(GRID, random_state=0).fit(X, y).to_inference()
    Xt, _ = _data(64, seed=2)
    batch = inf.predict_proba(Xt)
    single = np.vstack([inf.predict_proba(Xt[i : i + 1]) for i in range(len(Xt))])
    assert batch.tobytes() == single.tobytes()
    assert inf.predict_proba(Xt[::-1]).tobytes() == batch[::-1].tobytes()


def test_fold_ensemble_artifact_is_format_4_and_round_trips_exactly() -> None:
    X, y = _data()
    inf = AutoCalibratedBoosting(GRID, random_state=0).fit(X, y).to_inference()
    blob, sha = dump_model(inf, metadata={"algorithm": "auto"})
    m = _manifest(blob)
    assert m["format_version"] == MULTI_FORMAT_VERSION and m["kind"] == "binary_folds"
    assert m["scorer"]["n_folds"] == 5 and m["metadata"]["served"] == "fold_ensemble"
    loaded = load_model(blob, expected_sha256=sha)
    assert loaded.predict_proba(X).tobytes() == inf.predict_proba(X).tobytes()
    assert dump_model(loaded)[0] == blob  # the loaded model writes the same bytes


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda m: m.update(format_version=2), "format_version"),
        (lambda m: m["scorer"].update(n_folds=4), "ensemble_kinds|arrays"),
        (lambda m: m["scorer"].update(n_folds=1), "n_folds"),
        (lambda m: m["scorer"].update(n_folds=True), "n_folds"),
        (lambda m: m["scorer"].update(ensemble_kinds="trees"), "ensemble_kinds"),
        (lambda m: m["scorer"].update(score_kind="mean"), "score_kind"),
    ],
)
def test_malformed_fold_ensemble_manifests_are_refused(edit, match: str) -> None:  # type: ignore[no-untyped-def]
    X, y = _data(300)
    blob, _ = dump_model(AutoCalibratedBoosting(GRID[:1], random_state=0).fit(X, y).to_inference())
    with pytest.raises(ArtifactError, match=match):
        load_model(rezip(blob, edit))


def test_a_one_booster_kind_is_refused_as_format_4() -> None:
    X, y = _data(300)
    model = AutoCalibratedBoosting(GRID[:1], random_state=0, serve="refit").fit(X, y)
    blob, _ = dump_model(model.to_inference())
    assert _manifest(blob)["format_version"] == 2
    with pytest.raises(ArtifactError, match="format_version"):
        load_model(rezip(blob, lambda m: m.update(format_version=MULTI_FORMAT_VERSION)))


def test_a_fold_ensemble_recalibrates_and_shares_its_boosters_with_its_parent() -> None:
    X, y = _data(900)
    parent = AutoCalibratedBoosting(GRID, random_state=0).fit(X[:500], y[:500]).to_inference()
    parent_blob, _ = dump_model(parent)
    rec = recalibrate(parent, X[500:], y[500:], "isotonic")
    child = rec.model
    assert isinstance(child.scorer, FoldEnsembleScorer)
    assert child.scorer.ensembles is parent.scorer.ensembles  # type: ignore[attr-defined]
    np.testing.assert_array_equal(
        child.predict_proba(X[:50])[:, 1],
        rec.calibrator.predict(parent.scorer.raw_score(X[:50])),  # type: ignore[attr-defined]
    )
    blob, _ = dump_model(child, base=parent_blob)
    m = _manifest(blob)
    assert m["format_version"] == MULTI_FORMAT_VERSION and m["base"]["arrays"]
    assert not [f for f in zipfile.ZipFile(io.BytesIO(blob)).namelist() if f != "manifest.json"]
    loaded = load_model(blob, base=parent_blob)
    assert loaded.predict_proba(X).tobytes() == child.predict_proba(X).tobytes()


def test_large_data_serves_the_final_cross_fitting_folds_without_a_refit() -> None:
    X, y = _data(700)
    model = AutoCalibratedBoosting(GRID[:1], max_search_rows=300, random_state=0).fit(X, y)
    scorer = model.to_inference().scorer
    assert isinstance(scorer, FoldEnsembleScorer) and scorer.n_folds == 3
    assert {e.n_learners for e in scorer.ensembles} == {model.capacity_["n_estimators"]}
    assert model.calibration_info_["served"] == "fold_ensemble"
    assert model.calibration_info_["n_folds"] == 3
    refit = AutoCalibratedBoosting(GRID[:1], max_search_rows=300, random_state=0, serve="refit")
    assert refit.fit(X, y).to_inference().scorer.kind == "binary"
    # the same search, the same map's input rows: the folds' out-of-fold scores
    np.testing.assert_array_equal(refit.oof_.raw, model.oof_.raw)


def test_serve_must_be_known() -> None:
    X, y = _data(200)
    with pytest.raises(Exception, match="serve must be one of"):
        AutoCalibratedBoosting(GRID, serve="mean").fit(X, y)


@pytest.mark.parametrize("weak_learner", ["stump", "tree"])
def test_the_merged_ensemble_votes_the_mean_of_the_folds(weak_learner: str) -> None:
    X, y = _data()
    folds = tuple(
        AdaBoost(10 + 5 * i, weak_learner=weak_learner, max_depth=3, random_state=i)
        .fit(X[i::2], y[i::2])
        .ensemble_
        for i in range(3)
    )
    merged = merged_votes(folds)
    assert merged.n_learners == sum(e.n_learners for e in folds)
    mean = np.mean([e.vote_fraction(X) for e in folds], axis=0)
    np.testing.assert_allclose(merged.vote_fraction(X), mean, rtol=0, atol=1e-12)
    logistic = FoldEnsembleScorer(folds, "logistic", make_calibrator("platt").fit(mean, y))
    np.testing.assert_allclose(
        logistic.raw_score(X), np.mean([e.score(X, "logistic") for e in folds], axis=0),
        rtol=0, atol=1e-15,
    )  # fmt: skip


def _three_classes(n: int = 600, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = np.where(X[:, 0] * X[:, 1] > 0, "a", np.where(X[:, 2] > 0.3, "b", "c"))
    X[::13, 2] = np.nan
    return X, y


@pytest.mark.parametrize("grid", [GRID, (("oblique", 1, 10),)])
def test_multiclass_default_serves_the_mean_fold_vote_fractions_through_one_map(grid) -> None:  # type: ignore[no-untyped-def]
    X, y = _three_classes()
    model = AutoCalibrated(grid, random_state=0).fit(X, y)
    inner = model.model_
    assert isinstance(inner.estimator_, FoldVoteBoosters)
    assert inner.estimator_.n_folds == 5
    assert model.calibration_info_["served"] == "fold_ensemble"
    assert model.n_estimators_ <= model.capacity_["n_estimators"]
    # the fold boosters, refitted on the search's folds and truncated to the chosen rounds
    cap = model.capacity_
    folds = fold_indices(np.searchsorted(model.classes_, y), 5, 0, model.classes_)
    Xt, _ = _three_classes(200, seed=1)
    mean = np.mean(
        [
            SAMME(cap["n_estimators"], weak_learner=cap["weak_learner"], max_depth=cap["max_depth"])
            .fit(X[train], y[train])
            .score_samples(Xt)
            for train, _ in folds
        ],
        axis=0,
    )
    raw = inner.estimator_.score_samples(Xt)
    np.testing.assert_allclose(raw, mean, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(
        model.predict_proba(Xt), inner.joint_calibrator_.predict_proba(raw)
    )
    inf = model.to_inference()
    np.testing.assert_array_equal(inf.predict_proba(Xt), model.predict_proba(Xt))
    single = np.vstack([inf.predict_proba(Xt[i : i + 1]) for i in range(40)])
    assert single.tobytes() == inf.predict_proba(Xt[:40]).tobytes()  # batch-invariant
    blob, sha = dump_model(inf, metadata={"algorithm": "auto"})
    loaded = load_model(blob, expected_sha256=sha)
    assert loaded.predict_proba(Xt).tobytes() == inf.predict_proba(Xt).tobytes()


def test_multiclass_refit_and_the_logistic_score_fit_one_booster_on_all_rows() -> None:
    X, y = _three_classes(400)
    refit = AutoCalibrated(GRID[:1], random_state=0, serve="refit").fit(X, y)
    assert isinstance(refit.model_.estimator_, SAMME)
    assert "served" not in refit.calibration_info_
    logistic = AutoCalibrated(GRID[:1], random_state=0, score_kind="logistic").fit(X, y)
    assert isinstance(logistic.model_.estimator_, SAMME)  # no merged form: refitted
    folds = AutoCalibrated(GRID[:1], random_state=0).fit(X, y)
    # the same search either way
    np.testing.assert_array_equal(folds.oof_.raw, refit.oof_.raw)
    with pytest.raises(Exception, match="serve must be one of"):
        AutoCalibrated(GRID[:1], serve="mean").fit(X, y)


def test_multiclass_large_data_serves_the_final_cross_fitting_folds() -> None:
    X, y = _three_classes(700)
    model = AutoCalibrated(GRID[:1], max_search_rows=300, random_state=0).fit(X, y)
    booster = model.model_.estimator_
    assert isinstance(booster, FoldVoteBoosters) and booster.n_folds == 3
    assert model.calibration_info_["served"] == "fold_ensemble"
    assert model.calibration_info_["n_folds"] == 3
    refit = AutoCalibrated(GRID[:1], max_search_rows=300, random_state=0, serve="refit")
    assert isinstance(refit.fit(X, y).model_.estimator_, SAMME)
    np.testing.assert_array_equal(refit.oof_.raw, model.oof_.raw)  # the same cross-fitting
    np.testing.assert_allclose(model.predict_proba(X[:50]).sum(axis=1), 1.0)
