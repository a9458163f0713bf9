"""Vector-valued ensemble: weighted class votes of multiclass weak learners.

Every multiclass learner of this package outputs a class index ``Phi_m(x)`` in
``{0, ..., K-1}``: SAMME's ``T^{(m)}(x)`` (Zhu et al. 2009) and the angle-based
candidates ``g^{(m)}(x) = w_{Phi_m(x)}`` of Yang et al. (section 4). All of their vector
outputs are functions of the weighted votes

    ``V_k(x) = sum_m beta_m I(Phi_m(x) = k)``,   shape (n, K),

(SAMME's ``f_k`` directly, the angle-based scores through
:func:`models.inference.simplex.scores_from_votes`). :class:`VoteEnsemble` stores the
learners in a core :class:`models.inference.ensemble.Ensemble` (``"stumps"`` or ``"trees"``, the
same validated flat arrays and the same artifact format) whose leaf values are class
indices, and computes ``V`` from them. :mod:`models.inference.ensemble` is not changed.

Trees are evaluated by one compiled call (:func:`models.kernels.predict.tree_votes`:
every row walks every tree, and each class's votes are summed in numpy's pairwise
order), which gives the bits of ``row_sums(learner_classes(X) == k, betas)`` without
one numpy call per tree level and class (a one-row request of 300 depth-6 trees spent
about 70 us in those calls). The kernel module imports numba on the first tree-vote
call; :mod:`models.catalog.warmup` compiles it ahead of serving.

Stumps are evaluated without a per-learner loop: with ``L_m(x) = I(x_{j_m} <= t_m)``,
``V(x) = sum_m beta_m e_{right_m} + L(x) @ D + isnan(x) @ Miss`` where
``D_m = beta_m (e_{left_m} - e_{right_m})`` and ``Miss`` moves NaN rows from the right
value to the missing value. The products are taken one class column at a time
(matrix-vector): a (rows, M) x (M, K) matrix product can hand work to BLAS threads,
which on a busy machine sometimes costs milliseconds instead of microseconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from models.exceptions import ArtifactError, InvalidInput
from models.inference.ensemble import Ensemble, row_sums

__all__ = ["VoteEnsemble"]

_CHUNK = 4096
_STUMP_VALUES = ("value_left", "value_right", "value_missing")


def _class_values(ensemble: Ensemble) -> list[np.ndarray]:
    if ensemble.kind == "oblique":
        return [ensemble.arrays["value"]]
    names = _STUMP_VALUES if ensemble.kind == "stumps" else ("node_value",)
    return [ensemble.arrays[n] for n in names]


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
        if self.ensemble.kind not in ("stumps", "trees", "oblique"):  # linear: no class
            raise ArtifactError(
                f"ensemble kind must be stumps, trees or oblique, got {self.ensemble.kind!r}"
            )
        for values in _class_values(self.ensemble):
            if np.any((values != np.round(values)) | (values < 0) | (values >= k)):
                raise ArtifactError(f"learner outputs must be class indices in [0, {k})")
        d: dict[str, Any] = {"total": float(self.ensemble.alphas.sum())}
        if self.ensemble.kind == "stumps":
            a, beta = self.ensemble.arrays, self.ensemble.alphas
            m = np.arange(beta.size)
            vl, vr, vm = (a[n].astype(np.intp) for n in _STUMP_VALUES)
            diff = np.zeros((beta.size, k))
            np.add.at(diff, (m, vl), beta)
            np.add.at(diff, (m, vr), -beta)
            miss = np.zeros((self.ensemble.n_features, k))
            feature = a["feature"].astype(np.intp)
            np.add.at(miss, (feature, vm), beta)
            np.add.at(miss, (feature, vr), -beta)
            d.update(  # class-major copies: one matrix-vector product per class
                const=np.bincount(vr, weights=beta, minlength=k),
                diff=np.ascontiguousarray(diff.T),
                miss=np.ascontiguousarray(miss.T),
                feature=feature,
                threshold=a["threshold"],
            )
        elif self.ensemble.kind == "trees":  # the core ensemble's arrays of the compiled
            # walk (Ensemble.walk_arrays), with each leaf's class and the learner weights
            w = self.ensemble.walk_arrays()
            leaf_class = np.array(self.ensemble.arrays["node_value"], dtype=np.int64)
            order = w["record_node"]
            d.update(
                walk=w,
                leaf_class=leaf_class,
                # each record's leaf class (-1 at an internal node)
                node_class=np.where(w["feature"][order] < 0, leaf_class[order], -1).astype(
                    np.int32
                ),
                depth=int(self.ensemble._derived["depth"]),
                beta=np.array(self.ensemble.alphas, dtype=np.float64),
            )
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

    def _tree_votes(self, X: np.ndarray, total: float) -> np.ndarray:
        """Votes (``total = 0``) or vote fractions of tree learners, compiled."""
        from models.kernels.predict import as_kernel_input, tree_votes  # numba, on first use

        d = self._derived
        w = d["walk"]
        return tree_votes(  # type: ignore[no-any-return]
            as_kernel_input(X), w["roots"], w["feature"], w["threshold"], w["left"],
            w["right"], w["missing_left"], d["leaf_class"], w["nodes"], w["node_roots"],
            d["node_class"], w["cuts"], w["cut_offsets"], d["depth"], d["beta"],
            self.n_classes, total,
        )  # fmt: skip

    def votes(self, X: Any) -> np.ndarray:
        """``V_k(x) = sum_m beta_m I(Phi_m(x) = k)``, shape (n, K).

        Trees: one compiled walk over every row and tree
        (:func:`models.kernels.predict.tree_votes`), the same sums bit for bit as
        ``row_sums(learner_classes(X) == k, betas)``.
        """
        X = self._check_X(X)
        if self.ensemble.kind == "trees":
            return self._tree_votes(X, 0.0)
        out = np.empty((X.shape[0], self.n_classes))
        d = self._derived
        has_nan = bool(np.isnan(X).any())
        for i in range(0, X.shape[0], _CHUNK):
            xc = X[i : i + _CHUNK]
            if self.ensemble.kind == "stumps":
                left = np.take(xc, d["feature"], axis=1) <= d["threshold"]
                v = np.column_stack([row_sums(left, col) for col in d["diff"]]) + d["const"]
                if has_nan:
                    nan = np.isnan(xc)
                    v += np.column_stack([row_sums(nan, col) for col in d["miss"]])
            else:  # oblique: each learner's class, summed per class in a fixed order
                h = self.ensemble.learner_outputs(xc)
                beta = self.ensemble.alphas
                v = np.stack([row_sums(h == k, beta) for k in range(self.n_classes)], 1)
            out[i : i + _CHUNK] = v
        return out

    def vote_fractions(self, X: Any) -> np.ndarray:
        """``V(x) / sum_m beta_m``: rows in [0, 1] summing to 1, shape (n, K).

        For two classes, column 1 is the weighted vote fraction s(x) of Eq. 24 of
        Nikolaou et al. (2016).
        """
        if self.ensemble.kind == "trees":  # divided and clipped in the same compiled call
            return self._tree_votes(self._check_X(X), self.total)
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
