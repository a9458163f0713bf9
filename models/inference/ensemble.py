"""Numpy-only inference representation of a boosted ensemble.

An :class:`Ensemble` is the alpha-weighted sum of weak learners stored as flat arrays,
so that it can be written without pickle (one ``.npy`` per array) and evaluated with
numpy alone. How the learners are stored is its ``kind``, one of the ensemble layouts of
:mod:`models.inference.layouts` (``"stumps"``, ``"trees"``, ``"linear"``, ``"oblique"``
and any a program registers): the layout declares the arrays, checks them and evaluates
them; this class checks what every layout shares and sums the learners' outputs.

Discrete learners output -1 or +1; the vote fraction counts outputs ``> 0``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.special import expit

from models.exceptions import ArtifactError, InvalidInput, NotExplainable
from models.features.binning import codes_as_float, is_codes
from models.inference.layouts import get_layout
from models.inference.layouts.rows import CHUNK, block, row_sums
from models.specs.layout import EnsembleLayout

__all__ = ["Ensemble", "SECANT_MIN"]

SECANT_MIN = 1e-8
"""Below this ``|F - b|`` the logistic score's attribution slope is the derivative."""


def _fail(msg: str) -> None:
    raise ArtifactError(msg)


def _check_arrays(
    layout: EnsembleLayout, alphas: Any, arrays: Any, n_features: Any
) -> dict[str, Any]:
    """Validate what every layout shares, then the layout's own checks; return derived data."""
    if isinstance(n_features, bool) or not isinstance(n_features, int | np.integer):
        _fail(f"n_features must be an integer, got {n_features!r}")
    if n_features < 1:
        _fail(f"n_features must be >= 1, got {n_features}")
    if not isinstance(alphas, np.ndarray) or alphas.dtype != np.float64 or alphas.ndim != 1:
        _fail("'alphas' must be a 1-D float64 array")
    if alphas.size == 0:
        _fail("'alphas' must hold at least one learner weight")
    if not (np.all(np.isfinite(alphas)) and np.all(alphas > 0)):
        _fail("'alphas' must be finite and > 0")
    schema = layout.arrays
    if not isinstance(arrays, dict) or set(arrays) != set(schema):
        got = sorted(arrays) if isinstance(arrays, dict) else type(arrays).__name__
        _fail(f"{layout.name} arrays must be exactly {sorted(schema)}, got {got}")
    for name, dtype in schema.items():
        a = arrays[name]
        if not isinstance(a, np.ndarray) or a.dtype != dtype or a.ndim != 1:
            _fail(f"array {name!r} must be 1-D {np.dtype(dtype).name}")
        if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
            _fail(f"array {name!r} must be finite")
    return layout.prepare(alphas, arrays, int(n_features))


@dataclass(frozen=True, eq=False)
class Ensemble:
    """Alpha-weighted sum of weak learners, stored as flat arrays.

    Parameters
    ----------
    kind : str
        Learner layout, a name of :data:`models.inference.layouts.ENSEMBLE_LAYOUTS`.
    alphas : ndarray of float64, shape (M,)
        Voting weights alpha_t > 0 (Eq. 5 for AdaBoost).
    arrays : dict of str to ndarray
        Learner arrays of the layout ``kind``.
    n_features : int
        Number of input columns expected by :meth:`decision_function`.

    Raises
    ------
    ArtifactError
        If any array is malformed (dtype, shape, index range, non-finite values).

    References
    ----------
    Nikolaou et al., "Cost-sensitive boosting algorithms: do we really need them?",
    Machine Learning 104 (2016): F(x) = sum_t alpha_t h_t(x) (Eq. 7), the vote fraction
    s(x) (Eq. 24) and the logistic score s'(x) (Eq. 25).
    """

    kind: str
    alphas: np.ndarray
    arrays: dict[str, np.ndarray]
    n_features: int
    _derived: dict[str, Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        derived = _check_arrays(self.layout, self.alphas, self.arrays, self.n_features)
        object.__setattr__(self, "_derived", derived)

    @property
    def layout(self) -> EnsembleLayout:
        """The declaration of this ensemble's ``kind`` (looked up, so that a pickled
        ensemble holds arrays, not functions)."""
        return get_layout(self.kind)

    @property
    def n_learners(self) -> int:
        """Number of weak learners M."""
        return int(self.alphas.size)

    def _check_X(self, X: Any) -> np.ndarray:
        if is_codes(X):  # pre-binned training: converted block by block (layouts.rows.block)
            X = np.asarray(X)
            if X.ndim != 2 or X.shape[1] != self.n_features:
                raise InvalidInput(
                    f"X must be 2-D with {self.n_features} columns, got shape {X.shape}"
                )
            return X
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_features:
            raise InvalidInput(f"X must be 2-D with {self.n_features} columns, got shape {X.shape}")
        return X

    def _raw(self, X: np.ndarray, tag: str) -> np.ndarray:
        """``sum_t alpha_t h_t(x)`` (``tag="F"``) or ``sum_t alpha_t I(h_t(x) > 0)`` ("V")."""
        if self.layout.sums is not None:
            return self.layout.sums(self, X, tag)  # type: ignore[no-any-return]
        out = np.empty(X.shape[0])
        for i in range(0, X.shape[0], CHUNK):
            h = self.layout.outputs(self, block(X, i))
            h = h if tag == "F" else (h > 0).astype(np.float64)
            out[i : i + CHUNK] = row_sums(h, self.alphas)
        return out

    def learner_outputs(self, X: Any) -> np.ndarray:
        """Outputs h_t(x) of every learner, shape (n_samples, M) (used by staged scores)."""
        X = self._check_X(X)
        if X.dtype == np.uint8:
            X = codes_as_float(X)
        return self.layout.outputs(self, X)  # type: ignore[no-any-return]

    def decision_function(self, X: Any) -> np.ndarray:
        """F(x) = sum_t alpha_t h_t(x), Eq. 7 of Nikolaou et al.; shape (n_samples,)."""
        return self._raw(self._check_X(X), "F")

    def vote_fraction(self, X: Any) -> np.ndarray:
        """s(x) = sum_{t: h_t(x) > 0} alpha_t / sum_t alpha_t, Eq. 24; in [0, 1]."""
        s = self._raw(self._check_X(X), "V") / float(self.alphas.sum())
        return np.clip(s, 0.0, 1.0)

    def score(self, X: Any, kind: str) -> np.ndarray:
        """Raw score in [0, 1]: ``"vote"`` = s(x) (Eq. 24), ``"logistic"`` = s'(x) (Eq. 25)."""
        if kind == "vote":
            return self.vote_fraction(X)
        if kind == "logistic":
            return expit(2.0 * self.decision_function(X))  # no overflow warning for large |F|
        raise InvalidInput(f"score kind must be 'vote' or 'logistic', got {kind!r}")

    def explain(self, X: Any, tag: str) -> tuple[float, np.ndarray]:
        """``(bias, contributions)`` of ``sum_t alpha_t h_t(x)`` (``tag="F"``) or of the
        votes ``sum_t alpha_t I(h_t(x) > 0)`` (``"V"``): a number and a
        ``(n_samples, n_features)`` array summing to it per row up to rounding (the
        layout's ``explain``; :mod:`models.inference.explanation`).

        Raises
        ------
        NotExplainable
            The layout declares no attribution.
        """
        explain = self.layout.explain
        if explain is None:
            raise NotExplainable(
                f"the {self.kind!r} ensemble layout has no exact attribution of its scores"
            )
        return explain(self, self._check_X(X), tag)

    def explain_score(self, X: Any, kind: str) -> tuple[np.ndarray, np.ndarray]:
        """``(bias (n,), contributions (n, d))`` of :meth:`score` ``kind``, summing to it
        per row up to rounding (:mod:`models.inference.explanation`): the votes' attribution
        over ``sum alpha``, or F's times the secant slope of ``expit(2 .)`` between the bias
        and F, the bias then ``expit(2 b)`` (the derivative below :data:`SECANT_MIN`)."""
        if kind == "vote":
            b, c = self.explain(X, "V")
            total = float(self.alphas.sum())
            return np.full(c.shape[0], b / total), c / total
        if kind != "logistic":
            raise InvalidInput(f"score kind must be 'vote' or 'logistic', got {kind!r}")
        b, c = self.explain(X, "F")
        moved = c.sum(axis=1)
        start = float(expit(2.0 * b))
        end = expit(2.0 * (b + moved))
        far = np.abs(moved) >= SECANT_MIN
        slope = np.where(far, (end - start) / np.where(far, moved, 1.0), 2 * start * (1 - start))
        return end - slope * moved, c * slope[:, None]

    def to_arrays(self) -> dict[str, np.ndarray]:
        """Flat name -> array mapping (``alphas`` plus the learner arrays), numeric only."""
        out = {"alphas": self.alphas.copy()}
        out.update({k: v.copy() for k, v in self.arrays.items()})
        return out

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], kind: str, n_features: int) -> Ensemble:
        """Rebuild an ensemble from :meth:`to_arrays` output, validating everything.

        Raises
        ------
        ArtifactError
            On a missing or unknown array, a wrong dtype or shape, an index out of range,
            a malformed tree or a non-finite value.
        """
        if not isinstance(arrays, dict) or "alphas" not in arrays:
            raise ArtifactError("arrays must be a dict holding 'alphas'")
        copies = {
            k: (np.array(v, copy=True) if isinstance(v, np.ndarray) else v)
            for k, v in arrays.items()
        }
        for v in copies.values():
            if isinstance(v, np.ndarray):
                v.flags.writeable = False
        rest = {k: v for k, v in copies.items() if k != "alphas"}
        return cls(kind, copies["alphas"], rest, n_features)
