"""Automatic capacity: the search chooses depth and rounds on cross-fitted calibrated loss."""

from __future__ import annotations

import time

import numpy as np
import pytest

from models.auto import (
    AutoCalibrated,
    AutoCalibratedBoosting,
    AutoCalibratedMulticlass,
    checkpoints,
    fold_jobs,
    smoothed,
)
from models.boosting.adaboost import AdaBoost
from models.boosting.calibrated import CalibratedBoosting
from models.boosting.progress import progress_callback, training_deadline_at
from models.evaluation.metrics import log_loss
from models.exceptions import InvalidInput
from models.inference.fold_ensemble import FoldEnsembleScorer

GRID = (("stump", 1, 60), ("tree", 2, 30), ("tree", 4, 20))
_TIMING = ("search_seconds", "final_estimate_seconds", "curves")


def _xor(n: int = 900, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = ((X[:, 0] > 0) ^ (X[:, 1] > 0)).astype(int)
    return X, np.where(rng.random(n) < 0.05, 1 - y, y)


def _additive(n: int = 900, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    return X, (X[:, 0] - X[:, 1] + rng.normal(scale=0.7, size=n) > 0).astype(int)


def test_checkpoints_cover_every_scale_once() -> None:
    cps = checkpoints(400)
    assert cps[0] == 1 and cps[-1] == 400 and np.all(np.diff(cps) > 0)
    assert 30 <= len(cps) <= 80
    assert checkpoints(1).tolist() == [1]


def test_the_curve_is_smoothed_so_that_a_lone_dip_does_not_choose() -> None:
    curve = np.array([0.14, 0.09, 0.145, 0.13, 0.12, 0.11, 0.112, 0.115])
    s = smoothed(curve)
    assert int(np.argmin(s)) == 6 and s[0] == pytest.approx(0.115)
    assert smoothed(np.array([0.3, 0.2])).tolist() == [0.3, 0.2]


def test_interactions_choose_trees_and_additive_data_choose_stumps() -> None:
    X, y = _xor()
    deep = AutoCalibratedBoosting(GRID, random_state=0).fit(X, y).capacity_
    assert deep["weak_learner"] == "tree"  # stumps cannot represent XOR
    X, y = _additive()
    flat = AutoCalibratedBoosting(GRID, random_state=0).fit(X, y).capacity_
    assert flat["weak_learner"] == "stump"
    assert flat["stopped"] == "no_improvement"  # depth 2 did not help: depth 4 not tried
    assert len(flat["curves"]) == 2


def test_the_choice_is_recorded_with_its_validation_curves() -> None:
    X, y = _xor()
    model = AutoCalibratedBoosting(GRID, random_state=0).fit(X, y)
    cap = model.capacity_
    chosen = next(
        c for c in cap["curves"]
        if (c["weak_learner"], c["max_depth"]) == (cap["weak_learner"], cap["max_depth"])
    )  # fmt: skip
    assert chosen["best_rounds"] == cap["n_estimators"] == model.estimator_.n_estimators_
    smooth = smoothed(np.asarray(chosen["loss"]))
    assert chosen["best_loss"] == cap["validation_loss"] == round(float(smooth.min()), 6)
    assert chosen["rounds"][int(np.argmin(smooth))] == cap["n_estimators"]
    assert min(c["best_loss"] for c in cap["curves"]) == cap["validation_loss"]
    for c in cap["curves"]:
        assert (
            len(c["rounds"]) == len(c["loss"])
            and c.get("extended_from", c["rounds"][-1])
            <= dict(((w, d), m) for w, d, m in GRID)[(c["weak_learner"], c["max_depth"])]
        )
    # served: the search's 5 fold boosters, truncated to the chosen rounds (no refit)
    scorer = model.to_inference().scorer
    assert isinstance(scorer, FoldEnsembleScorer) and scorer.n_folds == 5
    kind = "stumps" if cap["weak_learner"] == "stump" else "trees"
    assert {e.kind for e in scorer.ensembles} == {kind}
    assert max(e.n_learners for e in scorer.ensembles) == cap["n_estimators"]
    assert model.calibration_info_["n_boost"] == len(y)
    assert model.calibration_info_["served"] == "fold_ensemble"
    # serve="refit": one booster with the chosen capacity, fitted on all rows
    refit = AutoCalibratedBoosting(GRID, random_state=0, serve="refit").fit(X, y)
    # (the fold ensemble's map is spread for the mean of its scores; the refit's is not)
    assert cap["score_spread"]["factor"] >= 1.0 and "score_spread" not in refit.capacity_
    folds_cap = {k: v for k, v in cap.items() if k != "score_spread"}
    assert refit.capacity_ == {**folds_cap, **{k: refit.capacity_[k] for k in _TIMING}}
    assert refit.estimator_.get_params()["weak_learner"] == cap["weak_learner"]
    assert refit.estimator_.n_estimators_ == cap["n_estimators"]
    assert "served" not in refit.calibration_info_


def test_the_chosen_model_beats_a_fixed_default_on_held_out_interactions() -> None:
    X, y = _xor(1500, seed=1)
    Xt, yt = _xor(2000, seed=2)
    auto = AutoCalibratedBoosting(GRID, random_state=0).fit(X, y)
    fixed = CalibratedBoosting(AdaBoost(60), split="kfold", random_state=0).fit(X, y)
    assert log_loss(yt, auto.predict_proba(Xt)[:, 1]) < log_loss(yt, fixed.predict_proba(Xt)[:, 1])


def test_large_data_search_on_a_subsample_then_cross_fit_all_rows() -> None:
    X, y = _additive(1200)
    model = AutoCalibratedBoosting(GRID[:1], max_search_rows=400, random_state=0)
    seen: list[tuple[str, int, int]] = []
    with progress_callback(lambda *a: seen.append(a)):
        model.fit(X, y)
    totals = {t for phase, _, t in seen if phase == "boosting"}
    assert totals == {model.progress_total()}  # 3 search folds count as the planned 5
    assert model.capacity_["search_rows"] == 400 and model.capacity_["search_folds"] == 3
    assert model.calibration_info_["n_folds"] == 3 and model.calibration_info_["n_boost"] == 1200


def test_the_time_budget_stops_the_search_after_the_first_entry() -> None:
    X, y = _xor()
    model = AutoCalibratedBoosting(GRID, time_budget=1e-6, random_state=0).fit(X, y)
    assert model.capacity_["stopped"] == "time_limit" and len(model.capacity_["curves"]) == 1
    assert model.capacity_["time_fallback"] is True  # no time left: the cheapest final stage
    assert model.capacity_["final_estimate_seconds"] == 0  # fold ensemble: no final fit
    roomy = AutoCalibratedBoosting(GRID, time_budget=3600.0, random_state=0).fit(X, y)
    assert roomy.capacity_["time_fallback"] is False and len(roomy.capacity_["curves"]) > 1
    refit = AutoCalibratedBoosting(GRID, time_budget=3600.0, random_state=0, serve="refit")
    assert refit.fit(X, y).capacity_["final_estimate_seconds"] > 0  # the fit on all rows
    # the deadline the service publishes has the same effect
    with training_deadline_at(time.monotonic() + 1e-6):
        model = AutoCalibratedBoosting(GRID, random_state=0).fit(X, y)
    assert model.capacity_["stopped"] == "time_limit"
    assert model.predict_proba(X[:3]).shape == (3, 2)


def test_progress_total_is_the_total_reported_and_skipped_entries_count_as_done() -> None:
    X, y = _xor(300)
    model = AutoCalibratedBoosting(GRID, time_budget=1e-6, n_folds=3, random_state=0)
    seen: list[tuple[str, int, int]] = []
    with progress_callback(lambda *a: seen.append(a)):
        model.fit(X, y)
    rounds = [(d, t) for phase, d, t in seen if phase == "boosting"]
    assert model.progress_total() == 3 * (60 + 30 + 20) + 4 * 60
    assert {t for _, t in rounds} == {model.progress_total()}
    done = [d for d, _ in rounds]
    assert done == sorted(done) and done[-1] >= 3 * 110  # after the skipped entries


def test_parallel_search_gives_the_same_model() -> None:
    X, y = _xor(400)
    one = AutoCalibratedBoosting(GRID, n_jobs=1, random_state=0).fit(X, y)
    two = AutoCalibratedBoosting(GRID, n_jobs=2, random_state=0).fit(X, y)
    timing = {"search_seconds", "final_estimate_seconds", "seconds"}

    def untimed(cap: dict[str, object]) -> dict[str, object]:
        out = {k: v for k, v in cap.items() if k not in timing}
        out["curves"] = [
            {k: v for k, v in c.items() if k not in timing}
            for c in cap["curves"]  # type: ignore[attr-defined]
        ]
        return out

    assert untimed(one.capacity_) == untimed(two.capacity_)
    np.testing.assert_array_equal(one.predict_proba(X), two.predict_proba(X))


def test_multiclass_default_trains_and_predicts() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 4))
    y = np.where(X[:, 0] * X[:, 1] > 0, "a", np.where(X[:, 2] > 0.3, "b", "c"))
    model = AutoCalibrated(GRID, random_state=0).fit(X, y)
    assert isinstance(model.model_, AutoCalibratedMulticlass)
    p = model.predict_proba(X[:50])
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    assert model.to_inference().classes == ("a", "b", "c")
    # the chosen rounds are an upper bound: this booster fits its rows perfectly earlier
    assert 1 <= model.n_estimators_ <= model.capacity_["n_estimators"]
    assert (model.predict(X) == y).mean() > 0.6
    binary = AutoCalibrated(GRID[:1], random_state=0).fit(*_additive(300))
    assert isinstance(binary.model_, AutoCalibratedBoosting)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"metric": "auc"}, "metric"),
        ({"method": "none"}, "calibration"),
        ({"grid": []}, "grid"),
        ({"grid": [("tree", 9, 10)]}, "depth"),
        ({"n_folds": 1}, "n_folds"),
        ({"max_rounds": 0}, "max_rounds"),
        ({"max_rounds": 2.5}, "max_rounds"),
    ],
)
def test_bad_settings_name_the_parameter(params: dict[str, object], match: str) -> None:
    X, y = _additive(200)
    with pytest.raises(InvalidInput, match=match):
        AutoCalibratedBoosting(**params).fit(X, y)  # type: ignore[arg-type]


def test_max_rounds_caps_every_grid_entry_and_the_progress_total() -> None:
    X, y = _xor(400)
    capped = AutoCalibratedBoosting(GRID, max_rounds=25, random_state=0)
    assert capped.progress_total() == 5 * (25 + 25 + 20) + 6 * 25
    capped.fit(X, y)
    assert all(c["rounds"][-1] <= 25 for c in capped.capacity_["curves"])
    assert capped.capacity_["n_estimators"] <= 25 and capped.estimator_.n_estimators_ <= 25


def test_multiclass_logistic_score_is_the_softmax_of_the_votes_and_serves_the_same() -> None:
    rng = np.random.default_rng(1)
    X = rng.normal(size=(450, 4))
    y = np.where(X[:, 0] > 0.4, 2, np.where(X[:, 1] > 0, 1, 0))
    model = AutoCalibrated(GRID[:2], score_kind="logistic", random_state=0).fit(X, y)
    booster = model.model_.estimator_
    assert booster.score_kind == "logistic"
    v = booster.ensemble_.votes(X)
    z = np.exp(v - v.max(axis=1, keepdims=True))
    # the raw scores the served calibrators take are the softmax of SAMME's votes
    np.testing.assert_allclose(booster.score_samples(X), z / z.sum(axis=1, keepdims=True))
    np.testing.assert_array_equal(model.to_inference().predict_proba(X), model.predict_proba(X))
    vote = AutoCalibrated(GRID[:2], random_state=0).fit(X, y)
    assert not np.array_equal(vote.predict_proba(X), model.predict_proba(X))


def test_fold_jobs_bounds_concurrent_fold_fits_by_memory():
    """Small folds run on up to n_jobs threads; folds whose work arrays would not fit
    beside the first in FOLD_MEMORY_BUDGET run one after another."""
    from models.auto import FIT_BYTES_PER_ROW, FOLD_MEMORY_BUDGET

    assert fold_jobs(2, 3, 100_000) == 2
    assert fold_jobs(8, 3, 100_000) == 3  # never more than the folds
    assert fold_jobs(1, 3, 100_000) == 1
    fits_one = FOLD_MEMORY_BUDGET // FIT_BYTES_PER_ROW
    assert fold_jobs(4, 3, fits_one) == 2  # one more fit fits in the budget
    assert fold_jobs(4, 3, fits_one + 1) == 1
    assert fold_jobs(2, 3, 6_666_667) == 1  # 10,000,000 rows, 3 folds


def test_an_entry_still_falling_at_its_cap_is_refitted_with_more_rounds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from models.auto import search

    X, y = _additive(600)
    grid = [("stump", 1, 10)]  # far too few rounds for this additive signal
    # off by default (measured, not adopted): the curve ends at the grid's rounds
    plain = AutoCalibratedBoosting(grid, random_state=0).fit(X, y).capacity_
    assert "extended_from" not in plain["curves"][0] and plain["n_estimators"] <= 10
    monkeypatch.setattr(search, "EXTEND_MAX_FACTOR", 4)
    model = AutoCalibratedBoosting(grid, random_state=0).fit(X, y)
    curve = model.capacity_["curves"][0]
    # refitted with twice the rounds while still falling, at most EXTEND_MAX_FACTOR x 10
    assert curve["extended_from"] == 10 and curve["rounds"][-1] in (20, 40)
    assert model.capacity_["n_estimators"] > 10
    assert max(e.n_learners for e in model.to_inference().scorer.ensembles) > 10
    # the extension chose better than the cap did: a lower out-of-fold loss
    assert model.capacity_["validation_loss"] < plain["validation_loss"]
    # the service's rounds limit bounds the extension too
    capped = AutoCalibratedBoosting(grid, max_rounds=10, random_state=0).fit(X, y).capacity_
    assert "extended_from" not in capped["curves"][0] and capped["n_estimators"] <= 10


def test_still_falling_needs_the_minimum_at_the_tail_and_a_fold_that_ran_every_round() -> None:
    from types import SimpleNamespace

    from models.auto.search import still_falling

    cps = checkpoints(100)
    full = [SimpleNamespace(n_estimators_=100), SimpleNamespace(n_estimators_=60)]
    early = [SimpleNamespace(n_estimators_=60)] * 2  # every fold stopped early
    last = len(cps) - 1
    mid = int(np.searchsorted(cps, 50))
    assert still_falling(cps, last, full)
    assert not still_falling(cps, mid, full)
    assert not still_falling(cps, last, early)
