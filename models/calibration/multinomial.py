"""Multinomial calibration of K class scores: one softmax map fitted on all K at once.

``p(x) = softmax(W^T s(x) + b)`` for raw class scores ``s(x)`` (SAMME's vote fractions)
with ``W`` a K x K matrix (``form="full"``), a diagonal (``"vector"``: vector scaling)
or a multiple of the identity (``"scalar"``: temperature scaling with class biases),
fitted by minimising the (weighted) multinomial log loss plus ``l2 / 2 * ||W||^2``
(Newton's method with a backtracking line search for up to 13 classes, L-BFGS beyond). This is the multinomial logistic regression
on the K scores that Zadrozny and Elkan (2002) list beside per-class calibration, and
the matrix / vector / temperature scaling of Guo et al. (2017).

Why besides per-class Platt maps (:mod:`models.multiclass.calibrated`): per-class maps
see each class's score alone and are coupled only by the final normalisation, so the
probabilities they give need not be calibrated jointly (the normalisation changes
every class's probability); a softmax map is fitted on the joint likelihood and
can use the other classes' votes (a row whose votes split between classes 1 and 2 is
informative about class 0). ``bench/quality/multiclass_calibration.py`` measures both
on the same out-of-fold scores.

Prediction is batch-invariant: the logits are accumulated column by column with
element-wise operations (no matrix product whose summation order could depend on the
batch), then a row-wise softmax (:func:`softmax_rows` of :func:`_logits`; served by the
compiled kernels of :mod:`models.kernels.predict`, which give the same bits in one call
per step instead of one numpy call per class).

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
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from models.exceptions import ArtifactError, InvalidInput, NotFitted, TrainingError

__all__ = ["FORMS", "MultinomialCalibrator", "softmax_rows"]

FORMS = ("full", "vector", "scalar")
MAX_ITER = 100
TOL = 1e-9
MAX_NEWTON_PARAMS = 200
"""Newton's method while ``(K + 1) K`` parameters (up to 13 classes); beyond, the
Hessian costs too much per step and a diagonally scaled gradient descent is used."""


_BLAS: list[Any] = []  # the threadpoolctl controller, made on the first fit


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the fit's matrix products on one BLAS thread.

    The products are tall and thin (rows x (K + 1)^2 by rows x K^2): on two threads
    OpenBLAS spent three times the wall time of one (16,000 rows, 6 classes: 150 against
    49 ms a fit), most of it waiting, and it split their sums by its thread count, so
    the fitted map depended in its last bits on the machine's cores. On one thread the
    map is the same on every machine. The limit is process-wide while the fit runs."""
    if not _BLAS:
        from threadpoolctl import ThreadpoolController  # fit-time only

        _BLAS.append(ThreadpoolController())
    with _BLAS[0].limit(limits=1, user_api="blas"):
        yield


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


def _curvature(p: np.ndarray, w: np.ndarray, unit_weights: bool) -> np.ndarray:
    """``w_i (diag p_i - p_i p_i^T)`` per row, shape (n, K, K), in place on one array.

    The same operations on the same operands as ``w * (p * I - p p^T)`` (an entry off the
    diagonal is ``-(p_a p_b)``, one on it ``p_a - p_a^2``, then times ``w_i``), so the
    same bits, without the four (n, K, K) temporaries: a third of the time of a Newton
    step went into them. With unit weights the product by 1.0 is skipped (exact)."""
    k = p.shape[1]
    A = p[:, :, None] * p[:, None, :]
    np.negative(A, out=A)
    flat = A.reshape(len(p), k * k)
    flat[:, :: k + 1] += p
    if not unit_weights:
        A *= w[:, None, None]
    return A


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
    theta_ : ndarray
        The fitted free parameters of the form (what ``fit(start=...)`` starts from).
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
        self,
        scores: ArrayLike,
        y_index: ArrayLike,
        sample_weight: ArrayLike | None = None,
        start: MultinomialCalibrator | None = None,
    ) -> MultinomialCalibrator:
        """Fit ``W_`` and ``b_`` on raw scores (n, K) and class indices 0..K-1.

        ``start``: a calibrator of the same form, ``l2`` and K fitted before (e.g. on the
        scores of the previous checkpoint of a validation curve) whose parameters seed
        Newton's method instead of the class priors. The problem is convex, so the
        optimum is the same (to the stopping tolerance); from a nearby start it takes
        fewer steps. Any other ``start`` (None, another form, one loaded from a state)
        starts from the priors.

        Raises
        ------
        InvalidInput
            Malformed scores, labels or weights.
        TrainingError
            Empty data or fewer than two classes present.
        """
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

        # parameters: B = [W; b] of shape (K + 1, K) (row j: input j, the last row the
        # biases), flattened row-major; J maps the form's free parameters into it
        d = k + 1
        x = np.column_stack([s, np.ones(n)])
        n_free = {"full": d * k, "vector": 2 * k, "scalar": 1 + k}[form]
        J = np.zeros((d * k, n_free))
        if form == "full":
            J[:, :] = np.eye(d * k)
        else:
            for j in range(k):
                J[j * k + j, j if form == "vector" else 0] = 1.0
        if form != "full":
            off = k if form == "vector" else 1
            for a in range(k):
                J[k * k + a, off + a] = 1.0
        ridge = np.concatenate([np.full(k * k, l2), np.zeros(k)])  # on W, not on b

        def full_params(theta: np.ndarray) -> np.ndarray:
            return (J @ theta).reshape(d, k)

        def loss_of(B: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
            z = x @ B
            z = z - z.max(axis=1, keepdims=True)
            logsum = np.log(np.exp(z).sum(axis=1))
            p = np.exp(z - logsum[:, None])
            value = float(w @ (logsum - z[np.arange(n), y])) + 0.5 * float(ridge @ (B.ravel() ** 2))
            return value, p, z

        theta = np.zeros(n_free)
        theta[-k:] = b0
        seed = getattr(start, "theta_", None)
        same = start is not None and (start.form, start.l2) == (form, l2)
        if same and seed is not None and seed.shape == theta.shape:  # same form, l2, K
            theta = np.array(seed, dtype=np.float64)
        with one_blas_thread():
            theta, B, n_iter = self._solve(theta, x, w, onehot, ridge, J, full_params, loss_of)
        W, b = B[:k], B[k]
        if not (np.all(np.isfinite(W)) and np.all(np.isfinite(b))):  # pragma: no cover
            raise TrainingError("multinomial calibration diverged")
        self.W_ = np.ascontiguousarray(W, dtype=np.float64)
        self.b_ = np.ascontiguousarray(b, dtype=np.float64)
        self.n_iter_ = int(n_iter)
        self.theta_ = np.asarray(theta, dtype=np.float64)
        return self

    def _solve(
        self,
        theta: np.ndarray,
        x: np.ndarray,
        w: np.ndarray,
        onehot: np.ndarray,
        ridge: np.ndarray,
        J: np.ndarray,
        full_params: Any,
        loss_of: Any,
    ) -> tuple[np.ndarray, np.ndarray, int]:
        """Newton's method, or L-BFGS beyond :data:`MAX_NEWTON_PARAMS` parameters."""
        d, k = x.shape[1], onehot.shape[1]
        n = x.shape[0]
        if d * k > MAX_NEWTON_PARAMS:  # many classes: L-BFGS (the Hessian is too large)
            from scipy.optimize import minimize  # fit-time only dependency

            def objective(th: np.ndarray) -> tuple[float, np.ndarray]:
                Bt = full_params(th)
                value, pt, _ = loss_of(Bt)
                gt = (x.T @ (w[:, None] * (pt - onehot))).ravel() + ridge * Bt.ravel()
                return value, J.T @ gt

            res = minimize(objective, theta, jac=True, method="L-BFGS-B",
                           options={"maxiter": 10 * MAX_ITER, "gtol": TOL * n})  # fmt: skip
            return res.x, full_params(res.x), int(res.nit)
        return self._newton(theta, x, w, onehot, ridge, J, full_params, loss_of)

    @staticmethod
    def _newton(
        theta: np.ndarray,
        x: np.ndarray,
        w: np.ndarray,
        onehot: np.ndarray,
        ridge: np.ndarray,
        J: np.ndarray,
        full_params: Any,
        loss_of: Any,
    ) -> tuple[np.ndarray, np.ndarray, int]:
        """Newton's method with a backtracking (Armijo) line search, as for Platt."""
        n, d = x.shape
        k = onehot.shape[1]
        n_free = J.shape[1]
        unit_weights = bool(np.all(w == 1.0))
        B = full_params(theta)
        fval, p, _ = loss_of(B)
        xx = (x[:, :, None] * x[:, None, :]).reshape(n, d * d)
        n_iter = 0
        for n_iter in range(1, MAX_ITER + 1):  # noqa: B007
            g = J.T @ ((x.T @ (w[:, None] * (p - onehot))).ravel() + ridge * B.ravel())
            if np.abs(g).max() <= TOL * n:
                break
            # Hessian (D K x D K): sum_i w_i (diag p_i - p_i p_i^T) (x) x_i x_i^T
            A = _curvature(p, w, unit_weights)
            H4 = (xx.T @ A.reshape(n, k * k)).reshape(d, d, k, k)
            H_full = H4.transpose(0, 2, 1, 3).reshape(d * k, d * k) + np.diag(ridge)
            # the tiny ridge fixes the one flat direction (the same shift of every bias)
            H = J.T @ H_full @ J + 1e-9 * n * np.eye(n_free)
            step = -np.linalg.solve(H, g)
            gd = float(g @ step)
            t = 1.0
            while t >= 1e-10:
                cand = theta + t * step
                cval, cp, _ = loss_of(full_params(cand))
                if cval <= fval + 1e-4 * t * gd:
                    theta, fval, p = cand, cval, cp
                    B = full_params(theta)
                    break
                t /= 2.0
            else:
                break  # no decrease along the step: as good as it gets
        return theta, B, n_iter

    def predict_proba(self, scores: ArrayLike) -> np.ndarray:
        """Calibrated class probabilities ``softmax(W^T s + b)``, shape (n, K)."""
        if not hasattr(self, "W_"):
            raise NotFitted("MultinomialCalibrator is not fitted yet; call fit() first")
        s = np.asarray(scores, dtype=np.float64)
        k = self.W_.shape[0]
        if s.ndim != 2 or s.shape[1] != k:
            raise InvalidInput(f"scores: expected shape (n, {k}), got {s.shape}")
        from models.kernels.predict import as_kernel_input, normalise_exp, shifted_logits

        # softmax_rows(_logits(s, W, b)) bit for bit: the logits and the normalisation
        # compiled, the exponential numpy's (models.kernels.predict; numba is imported on
        # the first prediction)
        z = shifted_logits(as_kernel_input(s), as_kernel_input(self.W_), as_kernel_input(self.b_))
        return normalise_exp(np.exp(z))  # type: ignore[no-any-return]

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
