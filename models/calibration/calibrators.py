"""Calibration of raw boosting scores into probability estimates.

Five calibrators share one small protocol (:class:`Calibrator`):

* :class:`PlattCalibrator` -- Platt scaling, ``p = 1 / (1 + exp(A s + B))``, with
  Platt's corrected targets, fitted by the robust Newton method of Lin, Lin & Weng.
* :class:`IsotonicCalibrator` -- isotonic regression, fitted with scikit-learn and kept
  as two threshold arrays so that prediction is ``np.interp`` (numpy only).
* :class:`BetaCalibrator` -- beta calibration of Kull, Silva Filho & Flach,
  ``p = 1 / (1 + exp(-(a ln s - b ln(1 - s) + c)))`` with ``a, b >= 0``.
* :class:`~models.calibration.venn_abers.VennAbersCalibrator` -- inductive Venn-ABERS,
  two isotonic fits per score merged into one probability (its own module).
* :class:`IdentityCalibrator` -- method ``"none"``: the raw score clipped to ``[0, 1]``.

Every calibrator serialises to a JSON-able dict (:meth:`to_state`) and is rebuilt,
with validation, by :func:`calibrator_from_state`; nothing is ever pickled.

References
----------
.. [1] Nikolaou, N., Edakunni, N., Kull, M., Flach, P., Brown, G. (2016). Cost-sensitive
   boosting algorithms: Do we really need them? Machine Learning 104, 359-384.
   Section 4 (scores of Eqs. 24-25, Platt scaling with target correction).
.. [2] Platt, J. C. (1999). Probabilistic outputs for support vector machines and
   comparisons to regularized likelihood methods.
.. [3] Lin, H.-T., Lin, C.-J., Weng, R. C. (2007). A note on Platt's probabilistic
   outputs for support vector machines. Machine Learning 68, 267-276.
.. [4] Zadrozny, B., Elkan, C. (2002). Transforming classifier scores into accurate
   multiclass probability estimates. KDD.
.. [5] Kull, M., Silva Filho, T., Flach, P. (2017). Beta calibration: a well-founded and
   easily implemented improvement on logistic calibration for binary classifiers.
   AISTATS, PMLR 54, 623-631.
"""

from __future__ import annotations

import math
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike

from models.calibration.inputs import FittedMap, check_scores, fit_rows
from models.calibration.venn_abers import VennAbersCalibrator
from models.exceptions import ArtifactError, InvalidInput, TrainingError

__all__ = [
    "BETA_EPS",
    "CALIBRATION_METHODS",
    "BetaCalibrator",
    "Calibrator",
    "IdentityCalibrator",
    "IsotonicCalibrator",
    "PlattCalibrator",
    "TRAINING_CALIBRATIONS",
    "calibrator_from_state",
    "make_calibrator",
]

#: Names accepted by :func:`make_calibrator` and in a calibrator state's ``"method"``.
CALIBRATION_METHODS: tuple[str, ...] = ("platt", "isotonic", "beta", "venn_abers", "none")
#: What a training may name as its ``calibration``: a method above, or ``"auto"`` (the
#: default algorithm's choice among the fitted maps by out-of-fold log loss,
#: :mod:`models.auto`). The API's and the command line's choices are these.
TRAINING_CALIBRATIONS: tuple[str, ...] = (*CALIBRATION_METHODS[:-1], "auto", "none")


@runtime_checkable
class Calibrator(Protocol):
    """Maps raw scores in ``[0, 1]`` (or any real scores) to calibrated ``P(y = 1)``."""

    method: str

    def fit(
        self, scores: ArrayLike, y01: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> Calibrator:
        """Fit the map on calibration scores and 0/1 labels; returns self.

        Parameters
        ----------
        scores : array-like of shape (n,)
            Raw scores, e.g. s(x) of Eq. 24 on data disjoint from the boosting data.
        y01 : array-like of shape (n,)
            Labels, 0 or 1 (1 = positive class).
        sample_weight : array-like of shape (n,), optional
            Non-negative row weights; rows with weight 0 are ignored.

        Raises
        ------
        InvalidInput
            Scores, labels or weights malformed (shape, non-finite, label not 0/1).
        TrainingError
            Empty data or only one class (with positive weight).
        """
        ...

    def predict(self, scores: ArrayLike) -> np.ndarray:
        """Calibrated ``P(y = 1)`` in ``[0, 1]`` of finite raw scores, shape (n,).

        Raises :class:`~models.exceptions.NotFitted` before :meth:`fit`.
        """
        ...

    def to_state(self) -> dict[str, Any]:
        """The fitted map as a JSON-able dict (see :func:`calibrator_from_state`)."""
        ...


def _platt_targets(y: np.ndarray) -> tuple[float, float, float, float]:
    """Platt's smoothed targets of ``y``: 1 / (N- + 2) for 0 and (N+ + 1) / (N+ + 2) for 1,
    and the counts N+, N-."""
    n_pos = float(np.count_nonzero(y == 1))
    n_neg = float(y.size - n_pos)
    return 1.0 / (n_neg + 2.0), (n_pos + 1.0) / (n_pos + 2.0), n_pos, n_neg


# --------------------------------------------------------------------------- Platt


def _platt_objective(
    f: np.ndarray, t: np.ndarray, w: np.ndarray, out: tuple[np.ndarray, np.ndarray] | None = None
) -> float:
    # -[t log p + (1 - t) log(1 - p)] with p = 1 / (1 + e^f) equals log(1 + e^f) - (1 - t) f;
    # np.logaddexp evaluates log(1 + e^f) without overflow (Lin et al. 2007, section 3).
    # ``out``: two work arrays like ``f`` (the same operations, in place: the same bits)
    if out is None:
        return float(np.dot(w, np.logaddexp(0.0, f) - (1.0 - t) * f))
    g = np.logaddexp(0.0, f, out=out[0])
    u = np.subtract(1.0, t, out=out[1])
    u *= f
    g -= u
    return float(np.dot(w, g))


def _sigmoid_neg(f: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``1 / (1 + exp(f))`` without overflow warnings (into ``out`` if given)."""
    if out is None:
        return np.exp(-np.logaddexp(0.0, f))
    p = np.logaddexp(0.0, f, out=out)
    np.negative(p, out=p)
    return np.exp(p, out=p)


def _affine(a: float, s: np.ndarray, b: float, out: np.ndarray) -> np.ndarray:
    """``a * s + b`` into ``out`` (the same two operations as the expression)."""
    np.multiply(a, s, out=out)
    out += b
    return out


class PlattCalibrator(FittedMap):
    """Platt scaling ``p = 1 / (1 + exp(A s + B))`` with Platt's target correction.

    With ``N+`` positives and ``N-`` negatives in the calibration data, the targets are
    ``(N+ + 1) / (N+ + 2)`` for positives and ``1 / (N- + 2)`` for negatives instead of
    1 and 0 (section 4 of [1]_, after [2]_). This keeps the optimum finite even on
    separable data. ``A`` and ``B`` minimise the (weighted) cross-entropy with these
    targets, found by Newton's method with a backtracking (Armijo) line search and a
    tiny ridge on the Hessian, evaluating the loss without overflow, as in Algorithm 1
    of Lin, Lin & Weng [3]_. ``N+`` and ``N-`` are counts of rows (with positive
    weight), not sums of weights, as in scikit-learn's ``_sigmoid_calibration``;
    ``sample_weight`` multiplies each row's loss term.

    Parameters
    ----------
    max_iter : int, default 100
        Maximum number of Newton iterations.
    tol : float, default 1e-10
        Stop when both gradient components, divided by the total weight, are below ``tol``.

    Attributes
    ----------
    A_, B_ : float
        Fitted sigmoid parameters (``A_ < 0`` when higher scores mean more positive).
    n_iter_ : int
        Newton iterations used.
    targets_ : tuple of float
        ``(target for negatives, target for positives)`` used in the fit.

    References
    ----------
    .. [1] Nikolaou et al. (2016), section 4: Platt scaling of s(x) (Eq. 24) with
       targets (N+ + 1)/(N+ + 2) and 1/(N- + 2).
    .. [2] Platt, J. C. (1999). Probabilistic outputs for support vector machines.
    .. [3] Lin, H.-T., Lin, C.-J., Weng, R. C. (2007). A note on Platt's probabilistic
       outputs for support vector machines. Machine Learning 68, 267-276.
    """

    method = "platt"
    _fitted_attr = "A_"

    def __init__(self, max_iter: int = 100, tol: float = 1e-10) -> None:
        self.max_iter = max_iter
        self.tol = tol

    def fit(
        self, scores: ArrayLike, y01: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> PlattCalibrator:
        """Fit ``A_`` and ``B_`` (parameters and errors: :meth:`Calibrator.fit`)."""
        s, y, w = fit_rows(scores, y01, sample_weight)
        lo, hi, n_pos, n_neg = _platt_targets(y)
        t = np.where(y == 1, hi, lo)
        del y
        total = float(w.sum())
        a, b = 0.0, math.log((n_neg + 1.0) / (n_pos + 1.0))
        # Newton's iterations in three work arrays, every operation the one the formulas
        # say, in place (the same bits as with temporaries): on 10,000,000 calibration
        # rows each array is 76 MiB, and temporaries made it a dozen
        f, u, v = np.empty_like(s), np.empty_like(s), np.empty_like(s)
        fval = _platt_objective(_affine(a, s, b, f), t, w, (u, v))
        sigma, min_step = 1e-12, 1e-10
        n_iter = 0
        for n_iter in range(1, int(self.max_iter) + 1):  # noqa: B007
            _affine(a, s, b, f)
            p = _sigmoid_neg(f, out=u)  # P(y = 1)
            d2 = np.multiply(w, p, out=v)  # w * p * (1 - p)
            d2 *= np.subtract(1.0, p, out=f)
            h22 = float(d2.sum()) + sigma
            h21 = float(np.dot(d2, s))
            h11 = float(np.dot(d2, np.multiply(s, s, out=f))) + sigma
            d1 = np.subtract(t, p, out=u)  # w * (t - p)
            d1 *= w
            g1, g2 = float(np.dot(d1, s)), float(d1.sum())
            if max(abs(g1), abs(g2)) <= self.tol * total:
                break
            det = h11 * h22 - h21 * h21
            da = -(h22 * g1 - h21 * g2) / det
            db = -(-h21 * g1 + h11 * g2) / det
            gd = g1 * da + g2 * db
            step = 1.0
            while step >= min_step:
                na, nb = a + step * da, b + step * db
                nf = _platt_objective(_affine(na, s, nb, f), t, w, (u, v))
                if nf < fval + 1e-4 * step * gd:
                    a, b, fval = na, nb, nf
                    break
                step /= 2.0
            else:
                break  # line search failed: (A, B) is as good as we can make it
        if not (math.isfinite(a) and math.isfinite(b)):  # pragma: no cover - defensive
            raise TrainingError(f"Platt scaling diverged (A={a}, B={b})")
        self.A_, self.B_ = float(a), float(b)
        self.n_iter_ = n_iter
        self.targets_ = (lo, hi)
        return self

    def predict(self, scores: ArrayLike) -> np.ndarray:
        """Calibrated ``P(y = 1) = 1 / (1 + exp(A s + B))`` (see :meth:`Calibrator.predict`)."""
        self._check_fitted()
        s = check_scores(scores)
        return _sigmoid_neg(self.A_ * s + self.B_)

    def to_state(self) -> dict[str, Any]:
        """JSON-able state ``{"method": "platt", "A": float, "B": float}``."""
        self._check_fitted()
        return {"method": "platt", "A": float(self.A_), "B": float(self.B_)}

    def __repr__(self) -> str:
        fitted = f", A_={self.A_:.6g}, B_={self.B_:.6g}" if hasattr(self, "A_") else ""
        return f"PlattCalibrator(max_iter={self.max_iter}, tol={self.tol}{fitted})"


# --------------------------------------------------------------------------- isotonic


class IsotonicCalibrator(FittedMap):
    """Isotonic (monotone non-decreasing) regression of labels on scores.

    Fitted with :class:`sklearn.isotonic.IsotonicRegression` (``increasing=True``,
    ``y_min=0``, ``y_max=1``, ``out_of_bounds="clip"``); only its threshold arrays are
    kept, and :meth:`predict` is ``np.interp`` over them, which equals scikit-learn's
    linear interpolation clipped at both ends. Inference therefore needs numpy only.

    Attributes
    ----------
    x_thresholds_, y_thresholds_ : ndarray of shape (m,)
        Non-decreasing knots of the fitted step/linear function.

    References
    ----------
    .. [1] Nikolaou et al. (2016), section 4 (isotonic regression as an alternative to
       Platt scaling of the score s(x), Eq. 24).
    .. [2] Zadrozny, B., Elkan, C. (2002). Transforming classifier scores into accurate
       multiclass probability estimates. KDD.
    """

    method = "isotonic"
    _fitted_attr = "x_thresholds_"

    def fit(
        self, scores: ArrayLike, y01: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> IsotonicCalibrator:
        """Fit the knots (parameters and errors: :meth:`Calibrator.fit`)."""
        from sklearn.isotonic import IsotonicRegression  # fit-time only dependency

        s, y, w = fit_rows(scores, y01, sample_weight)
        iso = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True, out_of_bounds="clip")
        iso.fit(s, y, sample_weight=w)
        self.x_thresholds_ = np.asarray(iso.X_thresholds_, dtype=np.float64).copy()
        self.y_thresholds_ = np.clip(np.asarray(iso.y_thresholds_, dtype=np.float64), 0.0, 1.0)
        return self

    def predict(self, scores: ArrayLike) -> np.ndarray:
        """Calibrated ``P(y = 1)``: linear interpolation between knots, clipped at the ends
        (see :meth:`Calibrator.predict`)."""
        self._check_fitted()
        s = check_scores(scores)
        return np.interp(s, self.x_thresholds_, self.y_thresholds_)

    def to_state(self) -> dict[str, Any]:
        """JSON-able state ``{"method": "isotonic", "x_thresholds": [...], "y_thresholds": [...]}``."""
        self._check_fitted()
        return {
            "method": "isotonic",
            "x_thresholds": [float(v) for v in self.x_thresholds_],
            "y_thresholds": [float(v) for v in self.y_thresholds_],
        }

    def __repr__(self) -> str:
        n = len(self.x_thresholds_) if hasattr(self, "x_thresholds_") else None
        return "IsotonicCalibrator()" if n is None else f"IsotonicCalibrator(n_thresholds={n})"


# --------------------------------------------------------------------------- beta


BETA_EPS = 1e-6
"""Scores are clipped to ``[BETA_EPS, 1 - BETA_EPS]`` before the logarithms of beta
calibration (a vote fraction of exactly 0 or 1 is then a finite, bounded feature)."""


def _beta_features(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    c = np.clip(s, BETA_EPS, 1.0 - BETA_EPS)
    return np.log(c), -np.log1p(-c)


class BetaCalibrator(FittedMap):
    """Beta calibration: ``P(y = 1) = 1 / (1 + exp(-(a ln s - b ln(1 - s) + c)))``.

    The map of Kull, Silva Filho & Flach [1]_: a logistic regression of the labels on the
    two features ``ln s`` and ``-ln(1 - s)`` of a score ``s`` in ``[0, 1]`` (scores are
    clipped to ``[BETA_EPS, 1 - BETA_EPS]``), with ``a, b >= 0`` so that the map is
    non-decreasing. It contains Platt scaling of ``logit(s)`` (``a = b``) and the
    identity (``a = b = 1, c = 0``), and also fits the sigmoid-shaped and inverse-sigmoid
    maps that one sigmoid of ``s`` cannot. As in :class:`PlattCalibrator` the targets
    are Platt's ``(N+ + 1) / (N+ + 2)`` and ``1 / (N- + 2)`` (a finite optimum on
    separable data); the three parameters minimise the weighted cross-entropy by
    L-BFGS-B with the bounds ``a, b >= 0`` (the paper refits without a feature whose
    coefficient comes out negative; the bound reaches the same optimum of a convex loss).

    Attributes
    ----------
    a_, b_, c_ : float
        The fitted parameters.
    center_, factor_ : float
        The score is first spread to ``center_ + factor_ (s - center_)`` (0 and 1 after
        :meth:`fit`; a fold ensemble's map sets them, :func:`models.calibration.spread.spread_map`).

    References
    ----------
    .. [1] Kull, M., Silva Filho, T., Flach, P. (2017). Beta calibration: a
       well-founded and easily implemented improvement on logistic calibration for
       binary classifiers. AISTATS, PMLR 54, 623-631.
    """

    method = "beta"
    _fitted_attr = "a_"

    def fit(
        self, scores: ArrayLike, y01: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> BetaCalibrator:
        """Fit ``a_``, ``b_``, ``c_`` (parameters and errors: :meth:`Calibrator.fit`)."""
        from scipy.optimize import minimize  # fit-time only

        s, y, w = fit_rows(scores, y01, sample_weight)
        lo, hi, n_pos, n_neg = _platt_targets(y)
        t = np.where(y == 1, hi, lo)
        u, v = _beta_features(s)
        total = float(w.sum())

        def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
            z = theta[0] * u + theta[1] * v + theta[2]
            # cross-entropy of sigmoid(z) against t: log(1 + e^z) - t z, without overflow
            f = float(np.dot(w, np.logaddexp(0.0, z) - t * z)) / total
            r = w * (np.exp(-np.logaddexp(0.0, -z)) - t) / total
            return f, np.array([np.dot(r, u), np.dot(r, v), r.sum()])

        start = np.array([1.0, 1.0, math.log((n_pos + 1.0) / (n_neg + 1.0))])
        res = minimize(
            loss, start, jac=True, method="L-BFGS-B",
            bounds=[(0.0, None), (0.0, None), (None, None)],
            options={"maxiter": 200, "gtol": 1e-10, "ftol": 1e-14},
        )  # fmt: skip
        a, b, c = (float(x) for x in res.x)
        if not all(math.isfinite(x) for x in (a, b, c)):  # pragma: no cover - defensive
            raise TrainingError(f"beta calibration diverged (a={a}, b={b}, c={c})")
        self.a_, self.b_, self.c_ = a, b, c
        self.center_, self.factor_ = 0.0, 1.0
        return self

    def predict(self, scores: ArrayLike) -> np.ndarray:
        """Calibrated ``P(y = 1)`` (see :meth:`Calibrator.predict`)."""
        self._check_fitted()
        s = check_scores(scores)
        if self.factor_ != 1.0:
            s = self.center_ + self.factor_ * (s - self.center_)
        u, v = _beta_features(s)
        return _sigmoid_neg(-(self.a_ * u + self.b_ * v + self.c_))

    def to_state(self) -> dict[str, Any]:
        """JSON-able state ``{"method": "beta", "a": float, "b": float, "c": float}``, with
        ``"center"`` and ``"factor"`` when the score is spread."""
        self._check_fitted()
        state: dict[str, Any] = {"method": "beta", "a": self.a_, "b": self.b_, "c": self.c_}
        if self.factor_ != 1.0:
            state.update(center=self.center_, factor=self.factor_)
        return state

    def __repr__(self) -> str:
        if not hasattr(self, "a_"):
            return "BetaCalibrator()"
        return f"BetaCalibrator(a_={self.a_:.6g}, b_={self.b_:.6g}, c_={self.c_:.6g})"


# --------------------------------------------------------------------------- identity


class IdentityCalibrator:
    """No calibration (method ``"none"``): the raw score clipped to ``[0, 1]``.

    Using the raw vote fraction s(x) (Eq. 24 of [1]_) as the probability and thresholding
    it is Ting's uncalibrated AdaMEC (Theorem 1, Eqs. 19-20 of [1]_).

    References
    ----------
    .. [1] Nikolaou et al. (2016), Eqs. 19, 20 and 24.
    """

    method = "none"

    def fit(
        self, scores: ArrayLike, y01: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> IdentityCalibrator:
        """Nothing to learn; inputs are not even required to contain both classes."""
        return self

    def predict(self, scores: ArrayLike) -> np.ndarray:
        """The scores clipped to ``[0, 1]``."""
        return np.clip(check_scores(scores), 0.0, 1.0)

    def to_state(self) -> dict[str, Any]:
        """JSON-able state ``{"method": "none"}``."""
        return {"method": "none"}

    def __repr__(self) -> str:
        return "IdentityCalibrator()"


# --------------------------------------------------------------------------- factories


def make_calibrator(method: str) -> Calibrator:
    """Return an unfitted calibrator for ``method`` in :data:`CALIBRATION_METHODS`.

    Parameters
    ----------
    method : str
        ``"platt"`` (section 4 of the paper, the default of calibrated AdaMEC),
        ``"isotonic"``, ``"beta"``, ``"venn_abers"`` or ``"none"``.

    Returns
    -------
    Calibrator

    Raises
    ------
    InvalidInput
        Unknown method; the message lists the valid ones.
    """
    if method == "platt":
        return PlattCalibrator()
    if method == "isotonic":
        return IsotonicCalibrator()
    if method == "beta":
        return BetaCalibrator()
    if method == "venn_abers":
        return VennAbersCalibrator()
    if method == "none":
        return IdentityCalibrator()
    raise InvalidInput(
        f"calibration method: expected one of {', '.join(repr(m) for m in CALIBRATION_METHODS)}, "
        f"got {method!r}"
    )


def _state_float(state: dict[str, Any], key: str) -> float:
    v = state.get(key)
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        raise ArtifactError(f"calibrator state field {key!r}: expected a finite number, got {v!r}")
    return float(v)


def _state_array(state: dict[str, Any], key: str) -> np.ndarray:
    v = state.get(key)
    if not isinstance(v, list) or not v:
        raise ArtifactError(f"calibrator state field {key!r}: expected a non-empty list of numbers")
    for i, item in enumerate(v):
        if isinstance(item, bool) or not isinstance(item, int | float) or not math.isfinite(item):
            raise ArtifactError(
                f"calibrator state field {key!r}[{i}]: expected a finite number, got {item!r}"
            )
    a = np.asarray(v, dtype=np.float64)
    if a.size > 1 and np.any(np.diff(a) < 0):
        bad = int(np.flatnonzero(np.diff(a) < 0)[0]) + 1
        raise ArtifactError(
            f"calibrator state field {key!r}[{bad}]: thresholds must be non-decreasing, "
            f"got {a[bad]} after {a[bad - 1]}"
        )
    return a


_STATE_KEYS = {
    "platt": {"method", "A", "B"},
    "isotonic": {"method", "x_thresholds", "y_thresholds"},
    "beta": {"method", "a", "b", "c", "center", "factor"},
    "venn_abers": {"method", "x_thresholds", "p0", "p1"},
}


def calibrator_from_state(state: dict[str, Any]) -> Calibrator:
    """Rebuild a fitted calibrator from :meth:`to_state` output, validating everything.

    Only the methods in :data:`CALIBRATION_METHODS` are accepted; no class named by the
    state is ever imported. Numbers must be finite; isotonic thresholds must be
    non-empty, of equal length, non-decreasing, with ``y`` in ``[0, 1]``; Venn-ABERS
    thresholds increasing, ``p0`` and ``p1`` one value longer, non-decreasing, in
    ``[0, 1]``; unknown fields are refused.

    Parameters
    ----------
    state : dict
        Output of ``to_state()``, e.g. after a JSON round trip.

    Returns
    -------
    Calibrator
        A fitted calibrator.

    Raises
    ------
    ArtifactError
        Anything malformed, with the offending field in the message.
    """
    if not isinstance(state, dict):
        raise ArtifactError(f"calibrator state: expected an object, got {type(state).__name__}")
    method = state.get("method")
    if method not in CALIBRATION_METHODS:
        raise ArtifactError(
            f"calibrator state field 'method': expected one of {list(CALIBRATION_METHODS)}, "
            f"got {method!r}"
        )
    allowed = _STATE_KEYS.get(str(method), {"method"})
    extra = sorted(set(map(str, state)) - allowed)
    if extra:
        raise ArtifactError(f"calibrator state for {method!r}: unexpected fields {extra}")
    if method == "none":
        return IdentityCalibrator()
    if method == "platt":
        platt = PlattCalibrator()
        platt.A_, platt.B_ = _state_float(state, "A"), _state_float(state, "B")
        platt.n_iter_ = 0
        return platt
    if method == "beta":
        beta = BetaCalibrator()
        beta.a_, beta.b_, beta.c_ = (_state_float(state, k) for k in ("a", "b", "c"))
        if beta.a_ < 0 or beta.b_ < 0:
            raise ArtifactError("calibrator state for 'beta': 'a' and 'b' must be >= 0")
        spread = [k for k in ("center", "factor") if k in state]
        beta.center_, beta.factor_ = 0.0, 1.0
        if spread:
            if len(spread) != 2:
                raise ArtifactError(
                    "calibrator state for 'beta': 'center' and 'factor' go together"
                )
            beta.center_, beta.factor_ = (
                _state_float(state, "center"),
                _state_float(state, "factor"),
            )
            if beta.factor_ <= 0:
                raise ArtifactError("calibrator state for 'beta': 'factor' must be > 0")
        return beta
    if method == "venn_abers":
        return _venn_abers_from_state(state)
    x = _state_array(state, "x_thresholds")
    y = _state_array(state, "y_thresholds")
    if x.shape != y.shape:
        raise ArtifactError(
            f"calibrator state: 'x_thresholds' has {x.size} values but 'y_thresholds' has {y.size}"
        )
    if y[0] < 0.0 or y[-1] > 1.0:
        raise ArtifactError("calibrator state field 'y_thresholds': values must lie in [0, 1]")
    iso = IsotonicCalibrator()
    iso.x_thresholds_, iso.y_thresholds_ = x, y
    return iso


def _venn_abers_from_state(state: dict[str, Any]) -> Calibrator:
    x = _state_array(state, "x_thresholds")
    if x.size > 1 and np.any(np.diff(x) <= 0):
        raise ArtifactError("calibrator state field 'x_thresholds': must be increasing")
    p0, p1 = _state_array(state, "p0"), _state_array(state, "p1")  # both non-decreasing
    for key, p in (("p0", p0), ("p1", p1)):
        if p.size != x.size + 1:
            raise ArtifactError(
                f"calibrator state field {key!r}: expected {x.size + 1} values (one more "
                f"than 'x_thresholds'), got {p.size}"
            )
        if p[0] < 0.0 or p[-1] > 1.0:
            raise ArtifactError(f"calibrator state field {key!r}: values must lie in [0, 1]")
    va = VennAbersCalibrator()
    va.x_thresholds_, va.p0_, va.p1_ = x, p0, p1
    return va
