"""The multinomial (softmax) calibration map of K class scores."""

from __future__ import annotations

import json

import numpy as np
import pytest

from models.calibration.calibrators import make_calibrator
from models.calibration.multinomial import MultinomialCalibrator, softmax_rows
from models.exceptions import ArtifactError, InvalidInput, NotFitted, TrainingError
from models.inference.multiclass_scorers import normalise_rows
from tests.models.conftest import rezip

# class k+1 (mod 3) is indicated by the score of class k: per-class maps cannot see it
SHIFTED = np.array([[0.0, 5.0, 0.0], [0.0, 0.0, 5.0], [5.0, 0.0, 0.0]])


def _scores(
    n: int, seed: int, W: np.ndarray = SHIFTED
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    s = rng.dirichlet(np.ones(W.shape[0]), size=n)  # like vote fractions: rows sum to 1
    bias = np.resize(np.array([0.2, -0.1, 0.0]), W.shape[0])
    p = softmax_rows(s @ W + bias)
    y = np.array([rng.choice(W.shape[0], p=row) for row in p])
    return s, y, p


def _log_loss(p: np.ndarray, y: np.ndarray) -> float:
    return float(-np.mean(np.log(p[np.arange(len(y)), y])))


def test_it_recovers_the_probabilities_of_a_softmax_model() -> None:
    s, y, _ = _scores(20000, 0)
    cal = MultinomialCalibrator("full", l2=0.0).fit(s, y)
    s_new, _, p_true = _scores(2000, 1)
    assert np.abs(cal.predict_proba(s_new) - p_true).max() < 0.05


def test_it_uses_the_other_classes_scores_where_per_class_maps_cannot() -> None:
    s, y, _ = _scores(3000, 2)
    s_test, y_test, p_true = _scores(3000, 3)
    joint = MultinomialCalibrator("full", l2=0.1).fit(s, y).predict_proba(s_test)
    maps = [make_calibrator("platt").fit(s[:, k], (y == k).astype(np.int8)) for k in range(3)]
    per_class = normalise_rows(
        np.column_stack([m.predict(s_test[:, k]) for k, m in enumerate(maps)])
    )
    best = _log_loss(p_true, y_test)
    assert _log_loss(joint, y_test) < best + 0.02
    assert _log_loss(per_class, y_test) > best + 0.1


@pytest.mark.parametrize("form", ["full", "vector", "scalar"])
def test_probabilities_are_batch_invariant_and_survive_the_state(form: str) -> None:
    s, y, _ = _scores(500, 4)
    cal = MultinomialCalibrator(form, l2=0.1).fit(s, y)
    p = cal.predict_proba(s)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    one_by_one = np.vstack([cal.predict_proba(s[i : i + 1]) for i in range(len(s))])
    assert np.array_equal(p, one_by_one)  # to the last bit
    state = json.loads(json.dumps(cal.to_state()))
    back = MultinomialCalibrator.from_state(state, 3)
    assert np.array_equal(back.predict_proba(s), p)
    if form != "full":  # the restricted forms keep W diagonal
        assert np.count_nonzero(cal.W_ - np.diag(np.diag(cal.W_))) == 0


def test_scaling_every_weight_alike_changes_nothing() -> None:
    s, y, _ = _scores(400, 5)
    w = np.random.default_rng(5).uniform(0.5, 2.0, size=len(y))
    a = MultinomialCalibrator(l2=0.1).fit(s, y, w).predict_proba(s)
    b = MultinomialCalibrator(l2=0.1).fit(s, y, 10.0 * w).predict_proba(s)
    np.testing.assert_allclose(a, b, atol=1e-6)


def test_the_ridge_keeps_separable_data_finite() -> None:
    s = np.eye(3)[np.repeat(np.arange(3), 20)]
    y = np.repeat(np.arange(3), 20)
    cal = MultinomialCalibrator(l2=0.1).fit(s, y)
    assert np.all(np.isfinite(cal.W_)) and np.abs(cal.W_).max() < 100
    p = cal.predict_proba(s)
    assert np.all(p[np.arange(60), y] > 0.9) and np.all(p < 1.0)


@pytest.mark.parametrize(
    ("kwargs", "data", "error", "match"),
    [
        ({"form": "diag"}, None, InvalidInput, "form"),
        ({"l2": -1.0}, None, InvalidInput, "l2"),
        ({}, (np.ones(5), np.zeros(5, dtype=int)), InvalidInput, "2-D"),
        ({}, (np.full((4, 3), 1 / 3), np.array([0, 1, 3, 1])), InvalidInput, "y_index"),
        ({}, (np.full((4, 3), np.nan), np.array([0, 1, 2, 1])), InvalidInput, "finite"),
        ({}, (np.full((4, 3), 1 / 3), np.zeros(4, dtype=int)), TrainingError, "two classes"),
    ],
)
def test_bad_input_is_named(
    kwargs: dict[str, object], data: tuple[np.ndarray, np.ndarray] | None, error: type, match: str
) -> None:
    s, y = data if data is not None else (np.full((4, 3), 1 / 3), np.array([0, 1, 2, 1]))
    with pytest.raises(error, match=match):
        MultinomialCalibrator(**kwargs).fit(s, y)  # type: ignore[arg-type]


def test_unfitted_and_malformed_states_are_refused() -> None:
    with pytest.raises(NotFitted):
        MultinomialCalibrator().predict_proba(np.ones((1, 3)))
    good = MultinomialCalibrator().fit(*_scores(60, 6)[:2]).to_state()
    for bad in (
        {**good, "method": "platt"},
        {**good, "form": "diag"},
        {**good, "W": [[1.0, 2.0], [3.0, 4.0]]},
        {**good, "b": [0.0, float("nan"), 0.0]},
        {k: v for k, v in good.items() if k != "W"},
    ):
        with pytest.raises(ArtifactError):
            MultinomialCalibrator.from_state(bad, 3)


# ------------------------------------------------------------- served by the default model
def _three_classes(n: int = 450, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    return X, np.where(X[:, 0] > 0.4, 2, np.where(X[:, 1] + 0.5 * X[:, 2] > 0, 1, 0))


def test_the_default_for_three_classes_is_multinomial_and_its_artifact_serves_the_same() -> None:
    from models.auto import AutoCalibrated
    from models.inference.artifacts import dump_model, load_model

    X, y = _three_classes()
    model = AutoCalibrated((("stump", 1, 40), ("tree", 3, 20)), random_state=0).fit(X, y)
    assert model.calibration_info_["method"] == "multinomial"
    assert model.model_.calibrators_ == [] and model.model_.joint_calibrator_ is not None
    blob, _ = dump_model(model.to_inference())
    served = load_model(blob)
    p = model.predict_proba(X)
    assert np.array_equal(served.scorer.proba(X), p)
    one_by_one = np.vstack([served.scorer.proba(X[i : i + 1]) for i in range(40)])
    assert np.array_equal(one_by_one, p[:40])
    costs = np.array([[0.0, 1.0, 1.0], [10.0, 0.0, 10.0], [1.0, 1.0, 0.0]])
    assert np.array_equal(served.decide(X, costs).labels_index, np.argmin(p @ costs, axis=1))
    # the out-of-fold probabilities are calibrated by the same kind of map
    assert model.oof_ is not None and model.oof_.proba.shape == (len(y), 3)

    for edit in (
        lambda m: m["scorer"]["calibrators"].append({"method": "platt", "A": -1.0, "B": 0.0}),
        lambda m: m["scorer"]["joint_calibrator"].update(W=[[1.0]]),
        lambda m: m["scorer"].pop("joint_calibrator"),  # no map at all
    ):
        with pytest.raises(ArtifactError):
            load_model(rezip(blob, edit))


def test_per_class_calibration_stays_available() -> None:
    from models.auto import AutoCalibrated

    X, y = _three_classes(300)
    model = AutoCalibrated(
        (("stump", 1, 30),), multiclass_calibration="per_class", random_state=0
    ).fit(X, y)
    assert model.calibration_info_["method"] == "platt" and len(model.model_.calibrators_) == 3
    with pytest.raises(InvalidInput, match="multiclass_calibration"):
        AutoCalibrated(multiclass_calibration="softmax").fit(X, y)


def test_many_classes_use_lbfgs_and_reach_newtons_optimum(monkeypatch: pytest.MonkeyPatch) -> None:
    import models.calibration.multinomial as mm

    k = 14  # (k + 1) k = 210 parameters: above MAX_NEWTON_PARAMS
    W = 4.0 * np.roll(np.eye(k), 1, axis=1)
    s, y, _ = _scores(3000, 7, W)
    assert (k + 1) * k > mm.MAX_NEWTON_PARAMS
    lbfgs = MultinomialCalibrator(l2=0.1).fit(s, y).predict_proba(s)
    monkeypatch.setattr(mm, "MAX_NEWTON_PARAMS", 10**6)
    newton = MultinomialCalibrator(l2=0.1).fit(s, y).predict_proba(s)
    assert np.abs(lbfgs - newton).max() < 1e-3


def test_the_fit_runs_on_one_blas_thread_whatever_the_process_has() -> None:
    from threadpoolctl import threadpool_info, threadpool_limits

    from models.calibration.multinomial import one_blas_thread

    rng = np.random.default_rng(3)
    s = rng.dirichlet(np.ones(6), size=16_000)
    y = rng.integers(0, 6, 16_000)
    fits = []
    for threads in (1, 2):
        with threadpool_limits(threads, user_api="blas"):
            fits.append(MultinomialCalibrator("full", l2=1e-3).fit(s, y))
            with one_blas_thread():
                inside = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
            assert inside and all(t == 1 for t in inside)
    np.testing.assert_array_equal(fits[0].W_, fits[1].W_)
    np.testing.assert_array_equal(fits[0].b_, fits[1].b_)


@pytest.mark.parametrize("form", ["full", "vector", "scalar"])
def test_a_warm_start_reaches_the_cold_optimum_in_fewer_steps(form: str) -> None:
    # two nearby score sets, as two neighbouring checkpoints of a validation curve
    s, y, _ = _scores(3000, 11)
    rng = np.random.default_rng(12)
    s_next = normalise_rows(np.clip(s + rng.normal(0.0, 0.01, s.shape), 1e-6, None))
    previous = MultinomialCalibrator(form, l2=0.1).fit(s, y)
    cold = MultinomialCalibrator(form, l2=0.1).fit(s_next, y)
    warm = MultinomialCalibrator(form, l2=0.1).fit(s_next, y, start=previous)
    np.testing.assert_allclose(warm.predict_proba(s_next), cold.predict_proba(s_next), atol=1e-8)
    assert warm.n_iter_ < cold.n_iter_


def test_a_start_of_another_form_or_size_is_ignored() -> None:
    s, y, _ = _scores(1000, 13)
    cold = MultinomialCalibrator("full", l2=0.1).fit(s, y)
    other_form = MultinomialCalibrator("vector", l2=0.1).fit(s, y)
    s4 = np.column_stack([s, np.zeros(len(s))])
    other_k = MultinomialCalibrator("full", l2=0.1).fit(s4, y)
    loaded = MultinomialCalibrator.from_state(json.loads(json.dumps(cold.to_state())), 3)
    for start in (other_form, other_k, loaded, None):
        again = MultinomialCalibrator("full", l2=0.1).fit(s, y, start=start)
        assert np.array_equal(again.W_, cold.W_) and np.array_equal(again.b_, cold.b_)


@pytest.mark.parametrize("weighted", [False, True])
def test_the_newton_curvature_has_the_bits_of_its_formula(weighted: bool) -> None:
    from models.calibration.multinomial import _curvature

    rng = np.random.default_rng(14)
    p = rng.dirichlet(np.ones(6), size=500)
    w = rng.random(500) * 2 if weighted else np.ones(500)
    formula = w[:, None, None] * (p[:, :, None] * np.eye(6)[None] - p[:, :, None] * p[:, None, :])
    assert np.array_equal(_curvature(p, w, not weighted), formula)
