"""Estimating deployment class priors from unlabelled predictions (label shift).

When the class priors of the traffic move away from those of the training data but
the class-conditional densities ``p(x | y)`` stay put (label or prior shift), the
calibrated posteriors of a model remain right up to a reweighting by the prior ratio
(:func:`models.decisions.rule.apply_prior_shift`). The new priors can be estimated from the
model's posteriors on unlabelled traffic alone, by the EM algorithm of Saerens,
Latinne & Decaestecker (2002), section 2.2:

E step (Eq. 2.9)::

    p_s(w_i | x_k) = (pi_s(i) / pi_t(i)) p_t(w_i | x_k) / sum_j (pi_s(j) / pi_t(j)) p_t(w_j | x_k)

M step (Eq. 2.10)::

    pi_{s+1}(i) = (1 / N) sum_k p_s(w_i | x_k)

starting from ``pi_0 = pi_t``, the training priors. Each step does not decrease the
likelihood of the unlabelled rows; the fixed point is the maximum-likelihood prior
vector. The estimate is only as good as the calibration of ``p_t`` on the training
distribution.

Section 2.3 of the paper tests whether the priors changed at all: twice the log
likelihood ratio of the estimated against the training priors (Eq. 2.12) is
asymptotically chi-squared with ``K - 1`` degrees of freedom.

References
----------
.. [1] Saerens, M., Latinne, P., Decaestecker, C. (2002). Adjusting the outputs of a
   classifier to new a priori probabilities: a simple procedure. Neural Computation 14,
   21-41. Section 2.2 (Eqs. 2.9-2.10), section 2.3 (likelihood-ratio test).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import chi2

from models.decisions.rule import _check_priors, _check_proba
from models.exceptions import InvalidInput

__all__ = ["EstimatedPriors", "estimate_priors"]


@dataclass(frozen=True, eq=False)
class EstimatedPriors:
    """Result of :func:`estimate_priors`.

    Attributes
    ----------
    priors : ndarray of shape (K,)
        Estimated deployment priors (sum to 1).
    train_priors : ndarray of shape (K,)
        The training priors the posteriors were calibrated under.
    n_rows : int
        Unlabelled rows used.
    n_iter : int
        EM iterations run.
    converged : bool
        Whether the largest change of a prior in the last iteration was below ``tol``.
    log_likelihood_ratio : float
        ``sum_k log(sum_i (pi(i) / pi_t(i)) p_t(w_i | x_k))``, the log likelihood of the
        rows under the estimated priors minus that under the training priors (>= 0).
    p_value : float
        Of the likelihood-ratio test "the priors did not change":
        ``2 * log_likelihood_ratio`` against chi-squared with ``K - 1`` degrees of freedom.
    """

    priors: np.ndarray
    train_priors: np.ndarray
    n_rows: int
    n_iter: int
    converged: bool
    log_likelihood_ratio: float
    p_value: float


def _log_lik_ratio(proba: np.ndarray, ratio: np.ndarray) -> float:
    mix = proba @ ratio
    return float(np.sum(np.log(np.maximum(mix, np.finfo(np.float64).tiny))))


def estimate_priors(
    proba: ArrayLike,
    train_priors: ArrayLike,
    max_iter: int = 1000,
    tol: float = 1e-8,
    min_prior: float = 1e-12,
) -> EstimatedPriors:
    """Estimate deployment class priors from calibrated posteriors by EM (Saerens et al. 2002).

    Parameters
    ----------
    proba : array-like of shape (n, K)
        Calibrated posteriors ``p_t(w | x)`` of unlabelled deployment rows, computed
        under the training priors (rows summing to 1, ``K >= 2``).
    train_priors : array-like of shape (K,)
        Training class priors ``pi_t`` (finite, > 0, summing to 1).
    max_iter : int, default 1000
        Maximum number of EM iterations.
    tol : float, default 1e-8
        Stop when no prior changes by more than ``tol`` in one iteration.
    min_prior : float, default 1e-12
        Floor of each estimated prior (then renormalised), so that the returned priors
        stay valid for :func:`~models.decisions.rule.apply_prior_shift`, which needs
        priors > 0. A class absent from the traffic converges slowly towards 0.

    Returns
    -------
    EstimatedPriors

    Raises
    ------
    InvalidInput
        ``proba`` malformed or empty, or bad ``max_iter``/``tol``.
    InvalidPriors
        ``train_priors`` of the wrong length, not positive or not summing to 1.

    Examples
    --------
    >>> import numpy as np
    >>> proba = np.array([[0.9, 0.1], [0.2, 0.8], [0.3, 0.7]])
    >>> est = estimate_priors(proba, [0.5, 0.5])
    >>> est.converged, round(float(est.priors.sum()), 6)
    (True, 1.0)

    References
    ----------
    .. [1] Saerens, Latinne, Decaestecker (2002), Neural Computation 14, Eqs. 2.9-2.10
       (EM) and section 2.3 (likelihood-ratio test).
    """
    p = _check_proba(proba)
    if p.shape[0] == 0:
        raise InvalidInput("proba: expected at least one row, got 0")
    k = p.shape[1]
    pt = _check_priors(train_priors, k, "train_priors")
    if isinstance(max_iter, bool) or not isinstance(max_iter, int) or max_iter < 1:
        raise InvalidInput(f"max_iter: expected an integer >= 1, got {max_iter!r}")
    if not (isinstance(tol, int | float) and tol > 0):
        raise InvalidInput(f"tol: expected a number > 0, got {tol!r}")
    pi = pt.copy()
    converged = False
    n_iter = 0
    for n_iter in range(1, max_iter + 1):  # noqa: B007
        w = p * (pi / pt)  # E step, Eq. 2.9 (numerator)
        w /= np.maximum(w.sum(axis=1, keepdims=True), np.finfo(np.float64).tiny)
        new = w.mean(axis=0)  # M step, Eq. 2.10
        new = np.maximum(new, min_prior)
        new /= new.sum()
        change = float(np.max(np.abs(new - pi)))
        pi = new
        if change < tol:
            converged = True
            break
    llr = max(_log_lik_ratio(p, pi / pt), 0.0) if k > 1 else 0.0
    return EstimatedPriors(
        priors=pi,
        train_priors=pt,
        n_rows=int(p.shape[0]),
        n_iter=n_iter,
        converged=converged,
        log_likelihood_ratio=llr,
        p_value=float(chi2.sf(2.0 * llr, k - 1)),
    )
