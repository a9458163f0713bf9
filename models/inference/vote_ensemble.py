"""Vector-valued ensemble: weighted class votes of multiclass weak learners.

Every multiclass learner of this package outputs a class index ``Phi_m(x)`` in
``{0, ..., K-1}``: SAMME's ``T^{(m)}(x)`` (Zhu et al. 2009) and the angle-based
candidates ``g^{(m)}(x) = w_{Phi_m(x)}`` of Yang et al. (section 4). All of their vector
outputs are functions of the weighted votes

    ``V_k(x) = sum_m beta_m I(Phi_m(x) = k)``,   shape (n, K),

(SAMME's ``f_k`` directly, the angle-based scores through
:func:`models.inference.simplex.scores_from_votes`). :class:`VoteEnsemble` stores the
learners in a core :class:`models.inference.ensemble.Ensemble` (any layout with class
outputs: ``"stumps"``, ``"trees"``, ``"oblique"``; the same validated flat arrays and the
same artifact format) whose learner outputs are class indices, and computes ``V`` from
them: by the layout's own vote function where it declares one (stumps without a
per-learner loop, trees in one compiled walk: :mod:`models.inference.layouts`), else by
summing ``I(Phi_m(x) = k)`` row by row in a fixed order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from models.exceptions import ArtifactError, InvalidInput
from models.inference.ensemble import Ensemble
from models.inference.layouts import ENSEMBLE_LAYOUTS
from models.inference.layouts.rows import CHUNK, row_sums

__all__ = ["VoteEnsemble"]


@dataclass(frozen=True, eq=False)
class VoteEnsemble:
    """Weak learners voting for classes with weights ``beta_m > 0``.

    Parameters
    ----------
    ensemble : Ensemble
        Learners whose outputs (stump values / tree leaf values) are class indices
        ``0..K-1`` stored as float64; ``ensemble.alphas`` are the weights ``beta_m``.
    n_classes : int
        ``K >= 2``.

    Raises
    ------
    ArtifactError
        If ``n_classes`` is not an integer >= 2 or a learner output is not a class index.

    References
    ----------
    J. Zhu, H. Zou, S. Rosset, T. Hastie. "Multi-class AdaBoost", Statistics and Its
    Interface 2 (2009): the SAMME classifier ``argmax_k sum_m alpha_m I(T_m(x) = k)``.
    Y. Yang, Y. Guo, X. Chang (2020), Algorithm 1 step 9 / Algorithm 2 step 10:
    ``f(x) = sum_m beta_m g_m(x)`` with ``g_m(x) = w_{Phi_m(x)}``.
    """

    ensemble: Ensemble
    n_classes: int
    _derived: dict[str, Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        k = self.n_classes
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 2:
            raise ArtifactError(f"n_classes must be an integer >= 2, got {k!r}")
        object.__setattr__(self, "n_classes", int(k))
        layout = self.ensemble.layout
        if not layout.class_arrays:  # linear: no class
            names = [n for n, lay in ENSEMBLE_LAYOUTS.items() if lay.class_arrays]
            listed = ", ".join(names[:-1]) + f" or {names[-1]}"
            raise ArtifactError(f"ensemble kind must be {listed}, got {self.ensemble.kind!r}")
        for name in layout.class_arrays:
            values = self.ensemble.arrays[name]
            if np.any((values != np.round(values)) | (values < 0) | (values >= k)):
                raise ArtifactError(f"learner outputs must be class indices in [0, {k})")
        d: dict[str, Any] = {"total": float(self.ensemble.alphas.sum())}
        if layout.votes is not None:
            d["votes"] = layout.votes(self.ensemble, k)
        object.__setattr__(self, "_derived", d)

    # ------------------------------------------------------------ properties
    @property
    def n_features(self) -> int:
        """Number of input columns."""
        return int(self.ensemble.n_features)

    @property
    def n_learners(self) -> int:
        """Number of weak learners M."""
        return self.ensemble.n_learners

    @property
    def betas(self) -> np.ndarray:
        """Learner weights ``beta_m`` (SAMME's ``alpha^{(m)}``), shape (M,)."""
        return self.ensemble.alphas

    @property
    def total(self) -> float:
        """``sum_m beta_m``."""
        return float(self._derived["total"])

    # ------------------------------------------------------------ prediction
    def _check_X(self, X: Any) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_features:
            raise InvalidInput(f"X must be 2-D with {self.n_features} columns, got shape {X.shape}")
        return X

    def learner_classes(self, X: Any) -> np.ndarray:
        """Class index ``Phi_m(x)`` of every learner, shape (n, M), int."""
        return self.ensemble.learner_outputs(self._check_X(X)).astype(np.intp)

    def votes(self, X: Any) -> np.ndarray:
        """``V_k(x) = sum_m beta_m I(Phi_m(x) = k)``, shape (n, K): the layout's vote
        function, or each learner's class summed per class in a fixed order (the same
        bits either way: ``row_sums(learner_classes(X) == k, betas)``)."""
        X = self._check_X(X)
        votes = self._derived.get("votes")
        if votes is not None:
            return votes(X, 0.0)  # type: ignore[no-any-return]
        out = np.empty((X.shape[0], self.n_classes))
        beta = self.ensemble.alphas
        for i in range(0, X.shape[0], CHUNK):
            h = self.ensemble.learner_outputs(X[i : i + CHUNK])
            out[i : i + CHUNK] = np.stack(
                [row_sums(h == k, beta) for k in range(self.n_classes)], 1
            )
        return out

    def vote_fractions(self, X: Any) -> np.ndarray:
        """``V(x) / sum_m beta_m``: rows in [0, 1] summing to 1, shape (n, K).

        For two classes, column 1 is the weighted vote fraction s(x) of Eq. 24 of
        Nikolaou et al. (2016).
        """
        votes = self._derived.get("votes")
        if votes is not None:  # trees: divided and clipped in the same compiled call
            return votes(self._check_X(X), self.total)  # type: ignore[no-any-return]
        return np.clip(self.votes(X) / self.total, 0.0, 1.0)

    def staged_votes(self, X: Any) -> np.ndarray:
        """Votes of the first ``m`` learners for m = 1..M, shape (M, n, K)."""
        h = self.learner_classes(X)
        onehot = h[:, :, None] == np.arange(self.n_classes)
        return np.cumsum(onehot * self.betas[None, :, None], axis=1).transpose(1, 0, 2)

    # ----------------------------------------------------------- persistence
    def to_arrays(self) -> dict[str, np.ndarray]:
        """Flat name -> numeric array mapping (the core ensemble's arrays)."""
        return self.ensemble.to_arrays()

    @classmethod
    def from_arrays(
        cls, arrays: dict[str, np.ndarray], kind: str, n_features: int, n_classes: int
    ) -> VoteEnsemble:
        """Rebuild from :meth:`to_arrays`, validating everything (raises ArtifactError)."""
        return cls(Ensemble.from_arrays(arrays, kind=kind, n_features=n_features), n_classes)
