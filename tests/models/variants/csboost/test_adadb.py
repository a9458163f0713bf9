"""AdaDB: same loss as CSAda, polynomial Newton step (tol 1e-6), conditional search."""

from __future__ import annotations

import numpy as np
import pytest

from models.boosting.adaboost import AdaBoost
from models.variants.csboost._alpha import alpha_eq41, alpha_loss_many
from models.variants.csboost.adadb import AdaDB, ConditionalSearchTrainer
from models.variants.csboost.cs_adaboost import CostSensitiveAdaBoost, class_errors, lower_left_hull
from models.weak import StumpTrainer
from tests.models.variants.csboost.conftest import binary_data, cheap_and_dear_misses


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize(
    ("c_fp", "c_fn"), [(1.0, 2.0), (1.0, 5.0), (1.0, 20.0), (1.0, 100.0), (10.0, 1.0)]
)
def test_adadb_agrees_with_csada(seed: int, c_fp: float, c_fn: float) -> None:
    """Footnote 5 of Nikolaou et al.: equivalent within numerical precision."""
    X, y = binary_data(n=1000, f=6, seed=seed, nan=0.05 if seed % 2 else 0.0)
    Xt, _ = binary_data(n=500, f=6, seed=seed + 10, nan=0.05 if seed % 2 else 0.0)
    cs = CostSensitiveAdaBoost(40, c_fp=c_fp, c_fn=c_fn).fit(X, y)
    db = AdaDB(40, c_fp=c_fp, c_fn=c_fn).fit(X, y)
    assert db.n_estimators_ == cs.n_estimators_
    np.testing.assert_allclose(db.estimator_alphas_, cs.estimator_alphas_, rtol=0, atol=1e-5)
    np.testing.assert_array_equal(db.predict(X), cs.predict(X))
    np.testing.assert_array_equal(db.predict(Xt), cs.predict(Xt))
    # the hull holds ~10 of the ~1,500-3,000 candidates CSAda solves for
    assert db.roots_solved_.max() < 0.05 * cs.roots_solved_.min()


def test_equal_costs_reduce_to_adaboost() -> None:
    X, y = binary_data(n=800, seed=5, nan=0.05)
    ada = AdaBoost(40).fit(X, y)
    db = AdaDB(40, c_fp=2.0, c_fn=2.0).fit(X, y)
    np.testing.assert_allclose(db.estimator_alphas_, ada.estimator_alphas_, rtol=1e-9)
    np.testing.assert_array_equal(db.predict(X), ada.predict(X))


def test_alpha_is_the_newton_root_of_eq41() -> None:
    X, y = binary_data(n=600, seed=6)
    db = AdaDB(20, c_fn=7.0).fit(X, y)
    ys = np.where(y == 1, 1.0, -1.0)
    cost = np.where(ys > 0, db.c1_, db.c2_)
    h = db.ensemble_.learner_outputs(X)
    F = np.zeros(len(y))
    for t, f_t in enumerate(db.staged_decision_function(X)):
        w = np.exp(-cost * ys * F)
        w /= w.sum()
        b, d, tp, tn = class_errors(ys, h[:, t], w)
        assert db.estimator_alphas_[t] == pytest.approx(
            alpha_eq41(b, d, tp, tn, db.c1_, db.c2_), abs=1e-6
        )
        F = f_t


def test_lower_left_hull_holds_every_conditional_optimum() -> None:
    rng = np.random.default_rng(0)
    b, d = rng.random(3000) * 0.5, rng.random(3000) * 0.5
    hull = lower_left_hull(b, d)
    assert 3 <= hull.size < 60
    for angle in np.linspace(0, np.pi / 2, 200):
        k = np.array([np.cos(angle), np.sin(angle)])
        score = k[0] * b + k[1] * d
        assert score[hull].min() == pytest.approx(score.min(), abs=1e-15)
    # so the minimum of the (concave) minimum-loss function is on the hull
    _, loss = alpha_loss_many(b, d, 0.5, 0.5, 1.6, 0.4)
    assert loss[hull].min() == loss.min()


@pytest.mark.parametrize("weak_learner", ["tree", "logistic"])
def test_conditional_search_with_other_learners(weak_learner: str) -> None:
    _, hi = cheap_and_dear_misses(AdaDB, 12, 7, weak_learner)
    assert hi.roots_solved_.min() >= 1 and hi.roots_solved_.max() <= 20


def test_conditional_search_never_worse_than_the_gradient_direction() -> None:
    """Each pass of the alternation lowers the loss (40): the kept learner is at least as
    good as the first one (the learner fitted to the gradient weights c(y) w)."""
    X, y = binary_data(n=600, seed=8)
    ys = np.where(y == 1, 1.0, -1.0)
    c1, c2 = 1.8, 0.2
    rng = np.random.default_rng(1)
    for _ in range(5):
        w = rng.random(len(y))
        w /= w.sum()
        search = ConditionalSearchTrainer(StumpTrainer(X, ys, 256, "error"), ys, c1, c2)
        _, h = search.fit_round(w)
        _, h0 = StumpTrainer(X, ys, 256, "error").fit_round(w * np.where(ys > 0, c1, c2))
        loss = alpha_loss_many(
            *(np.array([v]) for v in class_errors(ys, h, w)[:2]),
            *class_errors(ys, h, w)[2:],
            c1,
            c2,
        )[1][0]
        loss0 = alpha_loss_many(
            *(np.array([v]) for v in class_errors(ys, h0, w)[:2]),
            *class_errors(ys, h0, w)[2:],
            c1,
            c2,
        )[1][0]
        assert loss <= loss0 + 1e-15
