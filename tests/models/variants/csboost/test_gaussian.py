"""The synthetic problem of section 5.1 of Masnadi-Shirazi & Vasconcelos.

Two Gaussian classes N(+1, 1) (y = 1) and N(-1, 1) (y = -1), 10,000 examples each, stumps
on the scalar x, C2 = 1. The Bayes rule decides +1 iff x >= x* = -1/2 log(C1/C2)
(Eqs. 57-58): x* = -0.8047 for C1 = 5 and -1.4979 for C1 = 20 (section 5.1.2).

Tolerance. One sample of 10,000 draws per class pins the boundary down only so far: the
threshold that minimises the sample's own cost (the best any learner can do from it)
scatters around x* with a standard deviation of 0.058 (C1 = 5) and 0.085 (C1 = 20),
measured over 200 simulated samples. We accept a learned boundary within three such
standard deviations, 0.17 and 0.26, and also ask that the learned rule's expected cost
(under the true Gaussians) exceed the Bayes cost by less than 2%.

What CSAda does here (measured over 20 seeds, 50 rounds): its boundary has bias -0.13
(C1 = 5) and -0.07 (C1 = 20) with standard deviations 0.09 and 0.18, and an excess cost
of about 1% on average (at most 3.6% and 6.1%). The bias comes from the first stump, whose
population optimum lies at -1.007 (C1 = 5) and -2.026 (C1 = 20), beyond x*; later stumps
move the boundary back only slowly (the paper too reports CS-AdaBoost's difficulty with
unbalanced costs, Fig. 2, and needed a cost search to reach -0.7352 and -1.4993). The
fixed seed 0 used below gives -0.963 (C1 = 5) and -1.408 (C1 = 20): inside the tolerance,
but another seed can fall outside it for C1 = 20. RealBoost and LogitBoost (real-valued
stumps; same 20 seeds) have biases of about 0.03 at C1 = 5 and at most 0.1 at C1 = 20.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from models.variants.csboost._alpha import alpha_loss_many
from models.variants.csboost.adadb import AdaDB
from models.variants.csboost.cs_adaboost import CostSensitiveAdaBoost
from models.variants.csboost.cs_logitboost import CostSensitiveLogitBoost
from models.variants.csboost.cs_realboost import CostSensitiveRealBoost
from tests.models.variants.csboost.conftest import boundary_and_excess_risk, gaussians, normalized

BAYES = {5.0: -0.8047, 20.0: -1.4979}
TOLERANCE = {5.0: 0.17, 20.0: 0.26}  # 3 sd of the sample's own cost-minimising threshold


@pytest.fixture(scope="module")
def sample() -> tuple[np.ndarray, np.ndarray]:
    return gaussians(10_000, seed=0)


@pytest.mark.parametrize("c1", [5.0, 20.0])
@pytest.mark.parametrize(
    "make", [CostSensitiveAdaBoost, AdaDB, CostSensitiveRealBoost, CostSensitiveLogitBoost]
)
def test_learned_boundary_is_near_bayes(
    sample: tuple[np.ndarray, np.ndarray], make: type, c1: float
) -> None:
    x, y = sample
    assert -0.5 * np.log(c1) == pytest.approx(BAYES[c1], abs=1e-4)
    model = make(50, c_fp=1.0, c_fn=c1).fit(x, y)
    boundary, excess = boundary_and_excess_risk(model, c1)
    assert abs(boundary - BAYES[c1]) <= TOLERANCE[c1], boundary
    assert excess < 0.02, excess


@pytest.mark.parametrize(("c1", "population_first"), [(5.0, -1.007), (20.0, -2.026)])
def test_first_stump_of_csada_is_the_population_optimum(
    sample: tuple[np.ndarray, np.ndarray], c1: float, population_first: float
) -> None:
    """Round 1 of Algorithm 1 on the population: b(t) = P(x <= t, y = 1), d(t) =
    P(x > t, y = -1) for the stump +1 iff x > t; the optimum of (40)-(41) over t lies
    beyond x* (this is where CSAda's boundary starts)."""
    c1n, c2n = normalized(1.0, c1)
    t = np.linspace(-3, 1, 8001)
    _, loss = alpha_loss_many(0.5 * norm.cdf(t - 1), 0.5 * norm.sf(t + 1), 0.5, 0.5, c1n, c2n)
    assert t[np.argmin(loss)] == pytest.approx(population_first, abs=1e-3)
    x, y = sample
    model = CostSensitiveAdaBoost(1, c_fp=1.0, c_fn=c1).fit(x, y)
    assert model.ensemble_.arrays["threshold"][0] == pytest.approx(population_first, abs=0.1)


def test_tolerance_is_three_sampling_standard_deviations() -> None:
    """The sd of the sample's own cost-minimising threshold (60 samples here)."""
    t = np.linspace(-3, 1, 2001)
    for c1, tol in TOLERANCE.items():
        best = []
        for seed in range(60):
            x, y = gaussians(10_000, seed=1000 + seed)
            pos, neg = np.sort(x[y == 1, 0]), np.sort(x[y == 0, 0])
            risk = c1 * np.searchsorted(pos, t) + (neg.size - np.searchsorted(neg, t))
            best.append(t[np.argmin(risk)])
        sd = float(np.std(best))
        assert np.mean(best) == pytest.approx(BAYES[c1], abs=0.05)
        assert 0.7 * tol <= 3 * sd <= 1.3 * tol, sd
