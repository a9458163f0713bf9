"""Univariate weighted logistic regression base learners, exported as stumps."""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from models.ensemble import Ensemble
from models.weak.base import Stump, stumps_ensemble

__all__ = ["LogisticTrainer"]


class LogisticTrainer:
    """Fits one weighted logistic regression per feature and keeps the best, each round.

    For every feature ``j`` (simultaneously, vectorised), ``P(y=1|x) = sigmoid(b0 + b1 x_j)``
    is fitted to the weighted examples by a few Newton (IRLS) steps on standardised
    values with a tiny ridge term. The learner outputs ``sign(b0 + b1 x_j)``, i.e. a stump
    with threshold ``-b0 / b1`` (``-1`` at the threshold itself); the feature whose learner
    has the lowest weighted error is kept.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Training matrix (finite or NaN). Rows with NaN in feature ``j`` do not enter the
        fit for ``j``; NaN then follows a learned direction (the side whose output has
        the lower weighted error on the NaN rows; without NaN in training, the side of
        the heavier group).
    y : ndarray of shape (n_samples,)
        Labels in {-1, +1}.
    n_newton : int, default=8
        Maximum number of Newton steps per round (stops early below ``tol``).
    tol : float, default=1e-6
        Stop when no coefficient moves more than this.

    References
    ----------
    Nikolaou et al., "Cost-sensitive boosting algorithms: do we really need them?",
    Machine Learning 104 (2016), section 5.1: univariate logistic regression models as
    base learners (fitted there by conjugate gradient descent).
    """

    def __init__(self, X: np.ndarray, y: np.ndarray, n_newton: int = 8, tol: float = 1e-6) -> None:
        Xt = np.ascontiguousarray(np.asarray(X, dtype=np.float64).T)
        self._nan = np.isnan(Xt)
        self._present = (~self._nan).astype(np.float64)
        count = self._present.sum(axis=1)
        filled = np.where(self._nan, 0.0, Xt)
        mu = filled.sum(axis=1) / np.maximum(count, 1.0)
        centred = np.where(self._nan, 0.0, Xt - mu[:, None])
        sd = np.sqrt((centred * centred).sum(axis=1) / np.maximum(count, 1.0))
        sd = np.where(sd > 0, sd, 1.0)
        self._mu, self._sd = mu, sd
        self._Z = np.where(self._nan, 0.0, (Xt - mu[:, None]) / sd[:, None])
        self._Xt = Xt
        self._y = y
        self._y01 = (y > 0).astype(np.float64)
        self.n_newton, self.tol = n_newton, tol
        self.n_features = Xt.shape[0]

    def _newton(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Weighted univariate logistic fits of all features: (b0, b1) on standardised x."""
        Z = self._Z
        wm = self._present * (w / w.sum())
        lam = 1e-8
        b0 = np.zeros(Z.shape[0])
        b1 = np.zeros(Z.shape[0])
        for _ in range(self.n_newton):
            p = expit(b0[:, None] + b1[:, None] * Z)
            r = wm * (p - self._y01)
            s = wm * p * (1.0 - p)
            sz = s * Z
            g0, g1 = r.sum(1), (r * Z).sum(1) + lam * b1
            h00, h01, h11 = s.sum(1) + lam, sz.sum(1), (sz * Z).sum(1) + lam
            det = h00 * h11 - h01 * h01
            ok = det > 1e-300
            d0 = np.where(ok, (h11 * g0 - h01 * g1) / np.where(ok, det, 1.0), 0.0)
            d1 = np.where(ok, (h00 * g1 - h01 * g0) / np.where(ok, det, 1.0), 0.0)
            b0, b1 = b0 - d0, b1 - d1
            if max(np.abs(d0).max(initial=0.0), np.abs(d1).max(initial=0.0)) < self.tol:
                break
        return b0, b1

    def fit_round(self, w: np.ndarray) -> tuple[Stump, np.ndarray]:
        """Best univariate logistic learner for weights ``w``, as a stump, and its outputs."""
        b0, b1 = self._newton(w)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            thr = self._mu - b0 * self._sd / b1
        const = (b1 == 0) | ~np.isfinite(thr)
        thr = np.where(const, 0.0, thr)
        sign0 = np.where(b0 > 0, 1.0, -1.0)
        vl = np.where(const, sign0, np.where(b1 > 0, -1.0, 1.0))
        vr = np.where(const, sign0, -vl)
        wrong = self._y[None, :] != np.where(self._Xt <= thr[:, None], vl[:, None], vr[:, None])
        err_present = ((wrong & ~self._nan) * w).sum(1)
        pos_m = (self._nan * (w * (self._y > 0))).sum(1)
        neg_m = (self._nan * (w * (self._y < 0))).sum(1)
        err_l = np.where(vl > 0, neg_m, pos_m)
        err_r = np.where(vr > 0, neg_m, pos_m)
        w_left = ((self._Xt <= thr[:, None]) * w).sum(1)
        w_right = (self._present * w).sum(1) - w_left
        miss_left = (err_l < err_r) | ((err_l == err_r) & (w_left >= w_right))
        err = err_present + np.where(miss_left, err_l, err_r)
        j = int(np.argmin(err))
        vm = float(vl[j] if miss_left[j] else vr[j])
        x = self._Xt[j]
        h = np.where(x <= thr[j], vl[j], vr[j])
        h = np.where(self._nan[j], vm, h)
        return Stump(j, float(thr[j]), float(vl[j]), float(vr[j]), vm), h

    def assemble(self, learners: list[object], alphas: np.ndarray) -> Ensemble:
        """Pack the kept learners into a ``"stumps"`` :class:`Ensemble`."""
        return stumps_ensemble(learners, alphas, self.n_features)  # type: ignore[arg-type]
