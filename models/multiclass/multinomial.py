"""Multinomial calibration of K class scores: one softmax map fitted on all K at once.

``p(x) = softmax(W^T s(x) + b)`` for raw class scores ``s(x)`` (SAMME's vote fractions)
with ``W`` a K x K matrix (``form="full"``), a diagonal (``"vector"``: vector scaling)
or a multiple of the identity (``"scalar"``: temperature scaling with class biases),
fitted by minimising the (weighted) multinomial log loss plus ``l2 / 2 * ||W||^2``
(L-BFGS, :func:`scipy.optimize.minimize`). This is the multinomial logistic regression
on the K scores that Zadrozny and Elkan (2002) list beside per-class calibration, and
the matrix / vector / temperature scaling of Guo et al. (2017).

Why besides per-class Platt maps (:mod:`models.multiclass.calibrated`): per-class maps
see each class's score alone and are coupled only by the final normalisation, so the
probabilities they give need not be calibrated jointly (the normalisation changes
every class's probability); a softmax map is fitted on the joint likelihood and
can use the other classes' votes (a row whose votes split between classes 1 and 2 is
informative about class 0). ``bench/bench_multiclass_calibration.py`` measures both
on the same out-of-fold scores.

Prediction is numpy only and batch-invariant: the logits are accumulated column by
column with element-wise operations (no matrix product whose summation order could
depend on the batch), then a row-wise softmax.

References
----------
B. Zadrozny, C. Elkan. "Transforming classifier scores into accurate multiclass
probability estimates", KDD 2002. C. Guo, G. Pleiss, Y. Sun, K. Q. Weinberger. "On
calibration of modern neural networks", ICML 2017 (matrix, vector and temperature
scaling). M. Kull et al. "Beyond temperature scaling: obtaining well-calibrated
multi-class probabilities with Dirichlet calibration", NeurIPS 2019 (regularised
matrix scaling).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from models.exceptions import ArtifactError, InvalidInput, NotFitted, TrainingError

__all__ = ["FORMS", "MultinomialCalibrator", "softmax_rows"]

FORMS = ("full", "vector", "scalar")


def softmax_rows(z: np.ndarray) -> np.ndarray:
    """Row-wise softmax, each row computed on its own (batch-invariant)."""
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    total = e[:, 0].copy()
    for j in range(1, e.shape[1]):
        total += e[:, j]
    return e / total[:, None]


def _logits(s: np.ndarray, W: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``s @ W + b`` accumulated column by column (the same sums whatever the batch)."""
    z = np.broadcast_to(b, (s.shape[0], b.shape[0])).copy()
    for j in range(s.shape[1]):
        z += s[:, j : j + 1] * W[j]
    return z


class MultinomialCalibrator:
    """Softmax calibration map of K raw class scores (module docstring).

    Parameters
    ----------
    form : {"full", "vector", "scalar"}, default="full"
        Shape of ``W``: K x K, diagonal, or ``a * I``.
    l2 : float, default=1.0
        Ridge on ``W`` (the biases are free), relative to the summed log loss of the
        rows (sample weights are rescaled to mean 1 first, so ``l2`` means the same
        whatever their scale).

    Attributes
    ----------
    W_ : ndarray of shape (K, K)
        Weights (diagonal or a multiple of the identity for the restricted forms).
    b_ : ndarray of shape (K,)
        Class biases.
    """

    method = "multinomial"

    def __init__(self, form: str = "full", l2: float = 1.0) -> None:
        self.form = form
        self.l2 = l2

    def _check(self) -> None:
        if self.form not in FORMS:
            raise InvalidInput(f"form must be one of {list(FORMS)}, got {self.form!r}")
        if not (isinstance(self.l2, int | float) and math.isfinite(self.l2) and self.l2 >= 0):
            raise InvalidInput(f"l2 must be a finite number >= 0, got {self.l2!r}")

    def fit(
        self, scores: ArrayLike, y_index: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> MultinomialCalibrator:
        """Fit ``W_`` and ``b_`` on raw scores (n, K) and class indices 0..K-1.

        Raises
        ------
        InvalidInput
            Malformed scores, labels or weights.
        TrainingError
            Empty data or fewer than two classes present.
        """
        from scipy.optimize import minimize  # fit-time only dependency

        self._check()
        s = np.asarray(scores, dtype=np.float64)
        if s.ndim != 2 or s.shape[1] < 2:
            raise InvalidInput(f"scores: expected a 2-D array (n, K >= 2), got shape {s.shape}")
        if not np.all(np.isfinite(s)):
            raise InvalidInput("scores: expected finite numbers")
        n, k = s.shape
        if n == 0:
            raise TrainingError("calibration data is empty: cannot fit a calibrator on 0 rows")
        y = np.asarray(y_index)
        if y.shape != (n,) or not np.issubdtype(y.dtype, np.integer) or y.min() < 0 or y.max() >= k:
            raise InvalidInput(f"y_index: expected {n} class indices in [0, {k - 1}]")
        w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        if w.shape != (n,) or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
            raise InvalidInput(f"sample_weight: expected {n} finite weights >= 0, not all 0")
        if np.unique(y[w > 0]).size < 2:
            raise TrainingError("calibration data holds fewer than two classes")
        w = w * (n / w.sum())
        onehot = np.zeros((n, k))
        onehot[np.arange(n), y] = 1.0
        prior = (w @ onehot + 1.0) / (w.sum() + k)
        b0 = np.log(prior) - np.log(prior).mean()
        l2 = float(self.l2)
        form = self.form

        def unpack(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            if form == "full":
                W = theta[: k * k].reshape(k, k)
                return W, theta[k * k :]
            if form == "vector":
                return np.diag(theta[:k]), theta[k:]
            return np.eye(k) * theta[0], theta[1:]

        def objective(theta: np.ndarray) -> tuple[float, np.ndarray]:
            W, b = unpack(theta)
            z = s @ W + b
            z = z - z.max(axis=1, keepdims=True)
            logsum = np.log(np.exp(z).sum(axis=1))
            loss = float(w @ (logsum - z[np.arange(n), y])) + 0.5 * l2 * float(np.sum(W * W))
            dz = w[:, None] * (np.exp(z - logsum[:, None]) - onehot)
            gW = s.T @ dz + l2 * W
            gb = dz.sum(axis=0)
            if form == "full":
                gw = gW.ravel()
            elif form == "vector":
                gw = np.diag(gW).copy()
            else:
                gw = np.array([np.trace(gW)])
            return loss, np.concatenate([gw, gb])

        n_w = {"full": k * k, "vector": k, "scalar": 1}[form]
        theta0 = np.concatenate([np.zeros(n_w), b0])
        res = minimize(objective, theta0, jac=True, method="L-BFGS-B",
                       options={"maxiter": 1000, "gtol": 1e-8})  # fmt: skip
        W, b = unpack(res.x)
        if not (np.all(np.isfinite(W)) and np.all(np.isfinite(b))):  # pragma: no cover
            raise TrainingError("multinomial calibration diverged")
        self.W_ = np.ascontiguousarray(W, dtype=np.float64)
        self.b_ = np.ascontiguousarray(b, dtype=np.float64)
        self.n_iter_ = int(res.nit)
        return self

    def predict_proba(self, scores: ArrayLike) -> np.ndarray:
        """Calibrated class probabilities ``softmax(W^T s + b)``, shape (n, K)."""
        if not hasattr(self, "W_"):
            raise NotFitted("MultinomialCalibrator is not fitted yet; call fit() first")
        s = np.asarray(scores, dtype=np.float64)
        k = self.W_.shape[0]
        if s.ndim != 2 or s.shape[1] != k:
            raise InvalidInput(f"scores: expected shape (n, {k}), got {s.shape}")
        return softmax_rows(_logits(s, self.W_, self.b_))

    def to_state(self) -> dict[str, Any]:
        """JSON-able state ``{"method": "multinomial", "form", "l2", "W": [[...]], "b": [...]}``."""
        if not hasattr(self, "W_"):
            raise NotFitted("MultinomialCalibrator is not fitted yet; call fit() first")
        return {
            "method": "multinomial",
            "form": self.form,
            "l2": float(self.l2),
            "W": [[float(v) for v in row] for row in self.W_],
            "b": [float(v) for v in self.b_],
        }

    @classmethod
    def from_state(cls, state: Any, n_classes: int) -> MultinomialCalibrator:
        """Rebuild from :meth:`to_state` (validated; raises ArtifactError)."""
        if not isinstance(state, dict) or state.get("method") != "multinomial":
            raise ArtifactError("expected a multinomial calibrator state")
        try:
            W = np.asarray(state["W"], dtype=np.float64)
            b = np.asarray(state["b"], dtype=np.float64)
            cal = cls(form=str(state["form"]), l2=float(state["l2"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise ArtifactError(f"malformed multinomial calibrator state: {exc}") from None
        if cal.form not in FORMS:
            raise ArtifactError(f"unknown multinomial calibrator form {cal.form!r}")
        k = int(n_classes)
        if W.shape != (k, k) or b.shape != (k,):
            raise ArtifactError(
                f"multinomial calibrator: expected W of shape ({k}, {k}) and b of ({k},), "
                f"got {W.shape} and {b.shape}"
            )
        if not (np.all(np.isfinite(W)) and np.all(np.isfinite(b))):
            raise ArtifactError("multinomial calibrator: W and b must be finite")
        cal.W_, cal.b_ = np.ascontiguousarray(W), np.ascontiguousarray(b)
        return cal

    def __repr__(self) -> str:
        return f"MultinomialCalibrator(form={self.form!r}, l2={self.l2})"
