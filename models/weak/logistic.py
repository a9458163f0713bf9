"""Univariate weighted logistic regression base learners, exported as stumps."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from models.inference.ensemble import Ensemble
from models.weak.base import Stump, stumps_ensemble

__all__ = ["LogisticTrainer"]


class LogisticTrainer:
    """Fits one weighted logistic regression per feature and keeps the best, each round.

    For every feature ``j`` (simultaneously, vectorised), ``P(y=1|x) = sigmoid(b0 + b1 x_j)``
    is fitted to the weighted examples by a few Newton (IRLS) steps on standardised
    values with a tiny ridge term. The learner outputs ``sign(b0 + b1 x_j)``, i.e. a stump
    with threshold ``-b0 / b1`` (``-1`` at the threshold itself); the feature whose learner
    has the lowest weighted error is kept.

    The fit works on groups, not rows: each (feature, distinct value) pair is one group,
    and one sparse product per round gives the weight of the positive and negative
    examples in every group. The Newton sums and the stump errors are then sums over
    groups, exactly the sums over the rows regrouped, at a cost of the number of
    distinct values rather than ``n_samples x n_features`` (measured per round: 13x
    faster on chess, 7x on spambase, equal on magic whose values are nearly all distinct).

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
        n_features, n_samples = Xt.shape
        self._nan = np.isnan(Xt)
        self._has_nan = bool(self._nan.any())
        self._nan_f = self._nan.astype(np.float64) if self._has_nan else None
        present = ~self._nan
        count = present.sum(axis=1).astype(np.float64)
        filled = np.where(self._nan, 0.0, Xt)
        mu = filled.sum(axis=1) / np.maximum(count, 1.0)
        centred = np.where(self._nan, 0.0, Xt - mu[:, None])
        sd = np.sqrt((centred * centred).sum(axis=1) / np.maximum(count, 1.0))
        sd = np.where(sd > 0, sd, 1.0)
        self._mu, self._sd = mu, sd
        # One group per (feature, distinct present value); G[g, i] = 1 if row i is in g.
        values, group_rows, cols = [], [], []
        offset = 0
        for j in range(n_features):
            rows = np.flatnonzero(present[j])
            xv, inv = np.unique(Xt[j, rows], return_inverse=True)
            values.append(xv)
            group_rows.append(offset + inv.ravel())
            cols.append(rows)
            offset += len(xv)
        self._group_x = np.concatenate(values)
        sizes = np.array([len(v) for v in values])
        self._group_feature = np.repeat(np.arange(n_features), sizes)
        self._nonempty = np.flatnonzero(sizes)
        self._group_start = (np.cumsum(sizes) - sizes)[self._nonempty]
        self._group_z = (self._group_x - mu[self._group_feature]) / sd[self._group_feature]
        gr, gc = np.concatenate(group_rows), np.concatenate(cols)
        self._G = sp.csr_matrix(
            (np.ones(len(gr)), (gr, gc)), shape=(offset, n_samples), dtype=np.float64
        )
        self._Xt = Xt
        self._y = y
        self._y01 = (y > 0).astype(np.float64)
        self.n_newton, self.tol = n_newton, tol
        self.n_features = n_features

    def _sum_by_feature(self, values: np.ndarray) -> np.ndarray:
        """Per-feature sums of per-group values (groups are stored feature by feature)."""
        out = np.zeros(self.n_features)
        if len(values):
            out[self._nonempty] = np.add.reduceat(values, self._group_start)
        return out

    def _newton(self, w1: np.ndarray, w0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Weighted univariate logistic fits of all features: (b0, b1) on standardised x.

        ``w1`` and ``w0`` are the normalised weights of the positive and negative
        examples in each group (feature, distinct value): the weighted sums of the
        Newton step are sums over the groups, which equal the sums over the examples.
        A feature whose step fell below ``tol`` has converged and is not moved again.
        """
        f, z = self._group_feature, self._group_z
        wt = w0 + w1
        lam = 1e-8
        b0 = np.zeros(self.n_features)
        b1 = np.zeros(self.n_features)
        moving = np.ones(self.n_features, dtype=bool)
        for _ in range(self.n_newton):
            p = expit(b0[f] + b1[f] * z)
            r = wt * p - w1  # sum over the group of w * (p - y)
            s = wt * p * (1.0 - p)
            sz = s * z
            g0, g1 = self._sum_by_feature(r), self._sum_by_feature(r * z) + lam * b1
            h00 = self._sum_by_feature(s) + lam
            h01, h11 = self._sum_by_feature(sz), self._sum_by_feature(sz * z) + lam
            det = h00 * h11 - h01 * h01
            ok = moving & (det > 1e-300)
            safe = np.where(ok, det, 1.0)
            d0 = np.where(ok, (h11 * g0 - h01 * g1) / safe, 0.0)
            d1 = np.where(ok, (h00 * g1 - h01 * g0) / safe, 0.0)
            b0, b1 = b0 - d0, b1 - d1
            moving &= np.maximum(np.abs(d0), np.abs(d1)) >= self.tol
            if not moving.any():
                break
        return b0, b1

    def fit_round(self, w: np.ndarray) -> tuple[Stump, np.ndarray]:
        """Best univariate logistic learner for weights ``w``, as a stump, and its outputs."""
        grouped = self._G @ np.column_stack((w * self._y01, w * (1.0 - self._y01)))
        w1, w0 = grouped[:, 0], grouped[:, 1]
        total = w.sum()
        b0, b1 = self._newton(w1 / total, w0 / total)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            thr = self._mu - b0 * self._sd / b1
        const = (b1 == 0) | ~np.isfinite(thr)
        thr = np.where(const, 0.0, thr)
        sign0 = np.where(b0 > 0, 1.0, -1.0)
        vl = np.where(const, sign0, np.where(b1 > 0, -1.0, 1.0))
        vr = np.where(const, sign0, -vl)
        f = self._group_feature
        left = self._group_x <= thr[f]
        out = np.where(left, vl[f], vr[f])
        err_present = self._sum_by_feature(np.where(out > 0, w0, w1))
        if self._nan_f is not None:
            pos_m, neg_m = self._nan_f @ (w * (self._y > 0)), self._nan_f @ (w * (self._y < 0))
        else:
            pos_m = neg_m = np.zeros(self.n_features)
        err_l = np.where(vl > 0, neg_m, pos_m)
        err_r = np.where(vr > 0, neg_m, pos_m)
        w_left = self._sum_by_feature((w0 + w1) * left)
        w_right = self._sum_by_feature(w0 + w1) - w_left
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
