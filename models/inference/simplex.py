"""The simplex class encoding of angle-based classification (Eq. 1 of Yang et al.).

Class ``j`` (0-based here, ``j + 1`` in the paper) is the vertex ``w_j`` of a regular
simplex centred at the origin of R^{K-1}: unit norm, pairwise inner product
``cos(theta_K) = 1 / (1 - K) = -1/(K-1)``, and ``sum_j w_j = 0``. An angle-based
classifier maps ``x`` to ``f(x)`` in R^{K-1} and predicts ``argmax_j <f(x), w_j>`` (the
least-angle rule, section 2.2).

When every weak learner outputs a vertex, ``f(x) = sum_m beta_m w_{Phi_m(x)}`` and the
class scores follow from the weighted votes ``V_k(x) = sum_m beta_m I(Phi_m(x) = k)``:
``<f(x), w_k> = (K V_k(x) - sum_m beta_m) / (K - 1)`` (:func:`scores_from_votes`), so
no (K-1)-vectors need to be stored.

References
----------
.. [1] Y. Yang, Y. Guo, X. Chang. "Angle-Based Cost-Sensitive Multicategory
   Classification" (2020): Eq. 1 (vertices), section 2.2 (least-angle rule), proof of
   Lemma 1 (cos theta_K = 1/(1-K)).
.. [2] C. Zhang, Y. Liu. "Multicategory Angle-Based Large-Margin Classification",
   Biometrika 101 (2014).
"""

from __future__ import annotations

import numpy as np

from models.exceptions import InvalidInput

__all__ = ["simplex_vertices", "cos_theta", "scores_from_votes", "angle_vectors"]


def _check_k(n_classes: int) -> int:
    if isinstance(n_classes, bool) or not isinstance(n_classes, int | np.integer):
        raise InvalidInput(f"n_classes must be an integer >= 2, got {n_classes!r}")
    if n_classes < 2:
        raise InvalidInput(f"n_classes must be an integer >= 2, got {n_classes}")
    return int(n_classes)


def simplex_vertices(n_classes: int) -> np.ndarray:
    """Vertices ``w_1, ..., w_K`` of Eq. 1 as the rows of a ``(K, K-1)`` array.

    ``w_1 = (K-1)^{-1/2} 1`` and ``w_j = -(1 + K^{1/2}) / (K-1)^{3/2} 1 +
    (K/(K-1))^{1/2} e_{j-1}`` for ``2 <= j <= K``. For ``K = 2`` this is ``w_1 = 1``,
    ``w_2 = -1``.

    Parameters
    ----------
    n_classes : int
        ``K >= 2``.

    Returns
    -------
    ndarray of shape (K, K-1)
        Row ``j`` is the vertex of class index ``j`` (paper's class ``j + 1``).

    References
    ----------
    Yang, Guo and Chang (2020), Eq. 1.
    """
    k = _check_k(n_classes)
    ones = np.ones(k - 1)
    w = np.empty((k, k - 1))
    w[0] = ones / np.sqrt(k - 1.0)
    w[1:] = -(1.0 + np.sqrt(k)) / (k - 1.0) ** 1.5 * ones + np.sqrt(k / (k - 1.0)) * np.eye(k - 1)
    return w


def cos_theta(n_classes: int) -> float:
    """Cosine of the angle between two vertices: ``1 / (1 - K)`` (proof of Lemma 1)."""
    return 1.0 / (1.0 - _check_k(n_classes))


def scores_from_votes(votes: np.ndarray, total: float) -> np.ndarray:
    """Class scores ``<f(x), w_k>`` from weighted votes ``V_k(x)`` (module docstring).

    Parameters
    ----------
    votes : ndarray of shape (n, K)
        ``V_k(x) = sum_m beta_m I(Phi_m(x) = k)``.
    total : float
        ``sum_m beta_m``.

    Returns
    -------
    ndarray of shape (n, K)
        ``(K V_k - total) / (K - 1)``; rows sum to 0 like ``sum_k <f, w_k>`` (section 2.2).
    """
    k = votes.shape[1]
    return (k * votes - total) / (k - 1.0)


def angle_vectors(votes: np.ndarray) -> np.ndarray:
    """``f(x) = sum_k V_k(x) w_k`` in R^{K-1}, shape (n, K-1) (Algorithm 1, step 9)."""
    return votes @ simplex_vertices(votes.shape[1])
