"""Step sizes of cost-sensitive AdaBoost: the root of Eq. 41 (three solvers).

For a discrete learner g with class-wise weighted errors ``b`` (misses, Eq. 44) and ``d``
(false positives, Eq. 45), total class weights ``tp`` (T+, Eq. 42) and ``tn`` (T-,
Eq. 43), and costs ``c1`` (C1, misses) and ``c2`` (C2, false positives), the loss (40) as
a function of alpha is

    L(alpha) = b e^{C1 a} + (T+ - b) e^{-C1 a} + d e^{C2 a} + (T- - d) e^{-C2 a},

a convex function whose derivative L'(alpha) is the difference of the two sides of Eq. 41
(Appendix B of Masnadi-Shirazi & Vasconcelos). L' is increasing, so the root is unique
when it exists, and it is positive iff L'(0) = B - A < 0 with ``A = C1 (T+ - b) + C2 (T- - d)``
and ``B = C1 b + C2 d``. Bounding every exponential by the smallest and the largest cost
gives the bracket used by all solvers (our derivation, checked in the tests):

    log(A / B) / (2 max(C1, C2))  <=  alpha*  <=  log(A / B) / (2 min(C1, C2)),

which collapses to AdaBoost's alpha = 1/2 log((1 - err) / err) (Eq. 24) when C1 = C2 = 1.
All exponentials are evaluated in log space relative to the largest term, so no cost
ratio or step size overflows.

* :func:`alpha_eq41` -- one learner, :func:`scipy.optimize.brentq` on the bracket (the
  bracketing solver the paper's "bisection search" calls for; section 4.2).
* :func:`alpha_loss_many` -- many candidate learners at once: vectorised safeguarded
  Newton steps on the log form of Eq. 41, used to rank every stump of a round by its
  minimum loss (40).
* :func:`alpha_polynomial_many` / :func:`alpha_polynomial` -- AdaDB: with beta = e^alpha,
  Eq. 41 times beta^{C1+C2} is the (generalised) polynomial ``C1 b beta^{2C1+C2} +
  C2 d beta^{C1+2C2} - C1 (T+ - b) beta^{C2} - C2 (T- - d) beta^{C1} = 0``; Newton steps
  in beta until the step is below ``tol`` (1e-6, footnote 5 of Nikolaou et al.).

References
----------
Masnadi-Shirazi, H. and Vasconcelos, N. (2007). "Cost-Sensitive Boosting", SVCL-TR
2007/06: Eqs. 38-45, Algorithm 1, Appendix B.
Nikolaou, N. et al. (2016). "Cost-sensitive boosting algorithms: do we really need
them?", Machine Learning 104: Table 2 (CSAda, AdaDB), footnote 5 (Newton, tolerance 1e-6).
Landesa-Vazquez, I. and Alba-Castro, J. L. (2013). "Double-base asymmetric AdaBoost",
Neurocomputing 118: the polynomial form of the step-size equation.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.optimize import brentq

from models.boosting.loop import EPS_CLIP

__all__ = [
    "alpha_eq41",
    "alpha_loss_many",
    "alpha_polynomial",
    "alpha_polynomial_many",
    "bracket",
    "loss_eq40",
]


def _clip_perfect(
    b: np.ndarray, d: np.ndarray, tp: float, tn: float
) -> tuple[np.ndarray, np.ndarray]:
    """A learner without any weighted mistake (b = d = 0) has no finite root: like
    AdaBoost's eps (clipped to 1e-10, :mod:`models.boosting.loop`) its errors become 1e-10 of each
    class's weight, which gives AdaBoost's alpha ~ 11.5 when C1 = C2 = 1."""
    perfect = (b + d) <= 0
    if np.any(perfect):
        b = np.where(perfect, EPS_CLIP * tp, b)
        d = np.where(perfect, EPS_CLIP * tn, d)
    return b, d


def bracket(
    b: np.ndarray, d: np.ndarray, tp: float, tn: float, c1: float, c2: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(lo, hi, improves)``: the bracket of the root of Eq. 41 and whether it is > 0.

    ``lo = log(A/B) / (2 max C)``, ``hi = log(A/B) / (2 min C)``; candidates with
    ``A <= B`` (L'(0) >= 0: no positive step) get ``improves = False`` and ``lo = hi = 0``.
    """
    A = c1 * (tp - b) + c2 * (tn - d)
    B = c1 * b + c2 * d
    improves = A > B
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(improves, np.log(A) - np.log(B), 0.0)
    return r / (2.0 * max(c1, c2)), r / (2.0 * min(c1, c2)), improves


def _start(lo: np.ndarray, hi: np.ndarray, c1: float, c2: float) -> np.ndarray:
    """First iterate: the root for both costs equal to their mean, log(A/B) / (C1 + C2),
    which lies inside the bracket (the exact root when C1 == C2)."""
    r = lo * 2.0 * max(c1, c2)
    return np.clip(r / (c1 + c2), lo, hi)


def _log_terms(
    a: np.ndarray, b: np.ndarray, d: np.ndarray, tp: float, tn: float, c1: float, c2: float
) -> tuple[np.ndarray, ...]:
    """log of the four terms of L'(alpha) (without signs) and their common maximum."""
    with np.errstate(divide="ignore"):
        t1 = np.log(c1 * b) + c1 * a
        t2 = np.log(c2 * d) + c2 * a
        t3 = np.log(c1 * np.maximum(tp - b, 0.0)) - c1 * a
        t4 = np.log(c2 * np.maximum(tn - d, 0.0)) - c2 * a
    m = np.maximum(np.maximum(t1, t2), np.maximum(t3, t4))
    return t1 - m, t2 - m, t3 - m, t4 - m


def _scaled_derivative(
    a: float, b: float, d: float, tp: float, tn: float, c1: float, c2: float
) -> float:
    """L'(alpha) / (largest term): same sign and root as Eq. 41, never overflows."""
    t1, t2, t3, t4 = _log_terms(
        np.asarray(a, dtype=np.float64),
        np.asarray(b, dtype=np.float64),
        np.asarray(d, dtype=np.float64),
        tp,
        tn,
        c1,
        c2,
    )
    return float(np.exp(t1) + np.exp(t2) - np.exp(t3) - np.exp(t4))


def loss_eq40(
    alpha: np.ndarray | float,
    b: np.ndarray | float,
    d: np.ndarray | float,
    tp: float,
    tn: float,
    c1: float,
    c2: float,
) -> np.ndarray:
    """The bracket of Eq. 40 (the loss (38) after the step alpha), in log space."""
    a = np.asarray(alpha, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    d = np.asarray(d, dtype=np.float64)
    with np.errstate(divide="ignore"):
        terms = (
            np.log(b) + c1 * a,
            np.log(np.maximum(tp - b, 0.0)) - c1 * a,
            np.log(d) + c2 * a,
            np.log(np.maximum(tn - d, 0.0)) - c2 * a,
        )
    return np.asarray(sum(np.exp(t) for t in terms))


def alpha_eq41(b: float, d: float, tp: float, tn: float, c1: float, c2: float) -> float:
    """alpha_m of Eq. 41 for one learner, by Brent's bracketing method (xtol 1e-14).

    Returns 0.0 when no positive step decreases the loss (L'(0) >= 0); the boosting loop
    then stops without the learner (footnote 9 of Nikolaou et al.).
    """
    bb, dd, lo_a, hi_a, ok = _candidates(b, d, tp, tn, c1, c2)
    if not bool(ok):
        return 0.0
    lo, hi = float(lo_a), float(hi_a)
    args = (float(bb), float(dd), tp, tn, c1, c2)
    pad = 1e-12 * (1.0 + hi)
    lo, hi = max(0.0, lo - pad), hi + pad
    f_lo, f_hi = _scaled_derivative(lo, *args), _scaled_derivative(hi, *args)
    if f_lo >= 0.0 or f_hi <= 0.0:  # bracket collapsed to the root (e.g. C1 == C2)
        return lo if abs(f_lo) <= abs(f_hi) else hi
    return float(brentq(_scaled_derivative, lo, hi, args=args, xtol=1e-14, maxiter=200))


def _safeguarded_newton(
    newton: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]],
    lo: np.ndarray,
    hi: np.ndarray,
    x0: np.ndarray,
    tol: Callable[[np.ndarray], np.ndarray],
    max_iter: int,
) -> np.ndarray:
    """Vectorised safeguarded Newton iteration (the "rtsafe" scheme of Numerical Recipes).

    ``newton(x, idx) -> (f, x_new)`` gives, for the active entries ``idx``, the value of an
    increasing function at ``x`` (only its sign is used, to shrink the bracket) and the
    Newton iterate. A Newton iterate outside the bracket, or one not at least halving the
    previous step, is replaced by bisection. An entry stops when its step is <= tol(x).
    """
    x, lo, hi = x0.copy(), lo.copy(), hi.copy()
    dx_old = hi - lo
    idx = np.arange(x.size)
    for _ in range(max_iter):
        xa = x[idx]
        f, x_new = newton(xa, idx)
        lo[idx] = np.where(f <= 0.0, xa, lo[idx])
        hi[idx] = np.where(f >= 0.0, xa, hi[idx])
        la, ha = lo[idx], hi[idx]
        with np.errstate(invalid="ignore"):
            slow = ~((x_new > la) & (x_new < ha)) | (np.abs(x_new - xa) > 0.5 * np.abs(dx_old[idx]))
        x_new = np.where(slow, 0.5 * (la + ha), x_new)
        x_new = np.where(f == 0.0, xa, x_new)
        step = x_new - xa
        x[idx], dx_old[idx] = x_new, step
        idx = idx[np.abs(step) > tol(xa)]
        if idx.size == 0:
            break
    return x


def _candidates(
    b: np.ndarray | float, d: np.ndarray | float, tp: float, tn: float, c1: float, c2: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The sums ``b``, ``d`` of many candidate learners as float arrays, perfect learners
    clipped (:func:`_clip_perfect`), and the brackets ``lo``, ``hi`` of their positive
    steps with ``ok`` where one exists (:func:`bracket`)."""
    b, d = _clip_perfect(np.asarray(b, dtype=np.float64), np.asarray(d, dtype=np.float64), tp, tn)
    lo, hi, ok = bracket(b, d, tp, tn, c1, c2)
    return b, d, lo, hi, ok


def alpha_loss_many(
    b: np.ndarray, d: np.ndarray, tp: float, tn: float, c1: float, c2: float, max_iter: int = 100
) -> tuple[np.ndarray, np.ndarray]:
    """Roots of Eq. 41 and the minimum losses (40) of many learners at once.

    Eq. 41 says that the positive and the negative terms of L'(alpha) are equal; in logs,
    phi(alpha) = log(C1 b e^{C1 a} + C2 d e^{C2 a}) - log(C1 (T+ - b) e^{-C1 a}
    + C2 (T- - d) e^{-C2 a}) = 0. phi is increasing with slope in [2 min C, 2 max C] (exactly
    linear when C1 = C2), so Newton steps on phi converge in a few iterations; they run
    vectorised over all candidates inside the bracket of :func:`bracket`, safeguarded by
    bisection, until each step is below 1e-13 (1 + alpha). Candidates without a positive
    step get alpha = 0 and loss T+ + T- (the loss of not moving).

    Returns
    -------
    alpha, loss : ndarray
        Step sizes (>= 0) and the losses (40) at those steps.
    """
    b, d, lo, hi, ok = _candidates(b, d, tp, tn, c1, c2)
    alpha = np.zeros_like(b)
    loss = np.full(b.shape, tp + tn)
    if not ok.any():
        return alpha, loss
    bo, do, lo, hi = b[ok], d[ok], lo[ok], hi[ok]

    with np.errstate(divide="ignore"):  # log of the four coefficients of L'(alpha)
        k1, k2 = np.log(c1 * bo), np.log(c2 * do)
        k3, k4 = np.log(c1 * np.maximum(tp - bo, 0.0)), np.log(c2 * np.maximum(tn - do, 0.0))

    def newton(x: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        t1, t2 = k1[idx] + c1 * x, k2[idx] + c2 * x
        t3, t4 = k3[idx] - c1 * x, k4[idx] - c2 * x
        lp, ln = np.logaddexp(t1, t2), np.logaddexp(t3, t4)
        phi = lp - ln
        slope = (c1 * np.exp(t1 - lp) + c2 * np.exp(t2 - lp)) + (
            c1 * np.exp(t3 - ln) + c2 * np.exp(t4 - ln)
        )
        return phi, x - phi / slope

    x = _safeguarded_newton(
        newton, lo, hi, _start(lo, hi, c1, c2), lambda x: 1e-13 * (1.0 + np.abs(x)), max_iter
    )
    alpha[ok] = x
    loss[ok] = loss_eq40(x, bo, do, tp, tn, c1, c2)
    return alpha, loss


def alpha_polynomial_many(
    b: np.ndarray,
    d: np.ndarray,
    tp: float,
    tn: float,
    c1: float,
    c2: float,
    tol: float = 1e-6,
    max_iter: int = 100,
) -> np.ndarray:
    """AdaDB's steps: the positive roots beta of the polynomial form of Eq. 41, by Newton.

    P(beta) = C1 b beta^{2C1+C2} + C2 d beta^{C1+2C2} - C1 (T+ - b) beta^{C2}
    - C2 (T- - d) beta^{C1}. Its coefficients change sign once when ordered by exponent
    (the two negative terms have the smaller exponents), so by Descartes' rule of signs
    it has exactly one positive root. Newton steps beta <- beta - P/P' (computed in log
    beta, relative to the largest term, so that nothing overflows) start at the root for
    equal costs, are safeguarded by bisection in log beta, and stop when
    |delta log beta| ~ |delta beta| / beta <= tol (footnote 5 of Nikolaou et al.: Newton
    steps, tolerance 1e-6). Returns alpha = log(beta); 0 where no positive step
    decreases the loss.
    """
    b, d, lo, hi, ok = _candidates(b, d, tp, tn, c1, c2)
    alpha = np.zeros_like(b)
    if not ok.any():
        return alpha
    sign = np.array([1.0, 1.0, -1.0, -1.0])
    expo = np.array([2 * c1 + c2, c1 + 2 * c2, c2, c1])
    coef = np.stack([c1 * b, c2 * d, c1 * (tp - b), c2 * (tn - d)], axis=-1)[ok]
    with np.errstate(divide="ignore"):
        log_coef = np.log(np.maximum(coef, 0.0))

    def newton(u: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        t = log_coef[idx] + expo * u[:, None]
        t = np.exp(t - t.max(axis=1, keepdims=True))  # common factor: cancels in P / P'
        p = t @ sign
        dp = t @ (sign * expo)  # beta P'(beta), same factor
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(dp > 0.0, 1.0 - p / dp, -1.0)  # beta_new / beta
            u_new = np.where(ratio > 0.0, u + np.log(np.maximum(ratio, 1e-300)), -np.inf)
        return p, u_new

    alpha[ok] = _safeguarded_newton(
        newton,
        lo[ok],
        hi[ok],
        _start(lo[ok], hi[ok], c1, c2),
        lambda u: np.full(u.shape, tol),
        max_iter,
    )
    return alpha


def alpha_polynomial(
    b: float,
    d: float,
    tp: float,
    tn: float,
    c1: float,
    c2: float,
    tol: float = 1e-6,
) -> float:
    """One learner's AdaDB step (see :func:`alpha_polynomial_many`)."""
    return float(alpha_polynomial_many(np.array([b]), np.array([d]), tp, tn, c1, c2, tol)[0])
