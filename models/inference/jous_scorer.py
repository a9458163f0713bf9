"""The numpy-only scorer of JOUS-Boost: q-classifiers combined into ``p_hat`` (section 4).

What a served JOUS-Boost model runs, apart from its training code (:mod:`models.variants.jous`,
which needs scikit-learn), so that loading an artifact imports no training module.

References
----------
.. [1] D. Mease, A. J. Wyner, A. Buja. "Boosted classification trees and class
   probability/quantile estimation." Journal of Machine Learning Research 8 (2007),
   409-439: sections 3.1 and 4.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from models.exceptions import ArtifactError, InvalidInput
from models.inference.ensemble import Ensemble
from models.inference.scorers import join_arrays, split_arrays

__all__ = ["MAX_DELTA", "JousScorer", "check_delta", "grid_probability", "monotone_decisions"]

MAX_DELTA = 50


def check_delta(delta: Any, exc: type[ValueError] = InvalidInput, where: str = "delta") -> int:
    """``delta`` as an int, or ``exc``: an even integer in [2, MAX_DELTA].

    Section 4 anchors the combination on the median classifier, so ``q = 1/2`` must be
    on the grid ``i / delta``, i.e. ``delta`` must be even.
    """
    if isinstance(delta, bool) or not isinstance(delta, int | np.integer):
        raise exc(f"{where}: expected an even integer in [2, {MAX_DELTA}], got {delta!r}")
    if not 2 <= delta <= MAX_DELTA or delta % 2:
        raise exc(
            f"{where}: expected an even integer in [2, {MAX_DELTA}] (q = 1/2 must be on the "
            f"grid i/delta, section 4 of Mease et al.), got {delta}"
        )
    return int(delta)


def monotone_decisions(D: np.ndarray) -> np.ndarray:
    """Section 4's brute-force monotonisation of the quantile decisions.

    ``D[:, i - 1]`` is ``D_q(x)`` at ``q = i / delta`` (True = "p(x) > q"). Starting from
    the median column: if ``D_{1/2} = 1`` the decisions above 1/2 are kept up to the first
    0 (all later ones become 0) and every decision below 1/2 becomes 1; if ``D_{1/2} = 0``
    the decisions below 1/2 are kept down to the first 1 (all lower ones become 1) and
    every decision above 1/2 becomes 0. The result is non-increasing along q.
    """
    D = np.asarray(D, dtype=bool)
    n, m_all = D.shape
    m = (m_all + 1) // 2 - 1  # column of q = 1/2
    up = m + np.cumprod(D[:, m:], axis=1).sum(axis=1)  # run of 1s from the median upward
    low = np.zeros(n, dtype=np.intp)
    if m:  # first 1 scanning downward from just below the median
        below = D[:, :m][:, ::-1]
        low = np.where(below.any(axis=1), m - np.argmax(below, axis=1), 0)
    counts = np.where(D[:, m], up, low)
    return np.arange(m_all)[None, :] < counts[:, None]


def grid_probability(D: np.ndarray) -> np.ndarray:
    """``p_hat(x)`` of section 4 from raw quantile decisions ``D`` of shape (n, delta - 1).

    ``D_{1/2} = 1``: ``p_hat = min{q > 1/2 : D_q = 0} - 1/(2 delta)``, or ``1 - 1/(2 delta)``;
    ``D_{1/2} = 0``: ``p_hat = max{q < 1/2 : D_q = 1} + 1/(2 delta)``, or ``1/(2 delta)``.
    Equivalently ``(2 k + 1) / (2 delta)`` with k the number of monotonised ones.
    (The minus signs are lost in the text transcription of section 4; they are
    required for the value set {0.05, ..., 0.95} of section 5.1.)
    """
    mono = monotone_decisions(D)
    delta = mono.shape[1] + 1
    return (2.0 * mono.sum(axis=1) + 1.0) / (2.0 * delta)


@dataclass(frozen=True)
class JousScorer:
    """The ``delta - 1`` q-classifiers of JOUS-Boost and their section-4 combination.

    Parameters
    ----------
    ensembles : tuple of Ensemble
        ``ensembles[i - 1]`` is the boosted classifier at ``q = i / delta``;
        ``D_q(x) = 1`` iff its ``F(x) > 0`` (section 3.1, step 5).
    delta : int
        Quantization level (even, >= 2).

    References
    ----------
    Mease, Wyner & Buja (2007), JMLR 8: sections 3.1 (q-classifier) and 4 (p_hat).
    """

    kind: ClassVar[str] = "jous"
    ensembles: tuple[Ensemble, ...]
    delta: int

    def __post_init__(self) -> None:
        check_delta(self.delta, ArtifactError)
        if len(self.ensembles) != self.delta - 1:
            raise ArtifactError(
                f"a JOUS scorer with delta={self.delta} needs {self.delta - 1} ensembles, "
                f"got {len(self.ensembles)}"
            )
        if len({int(e.n_features) for e in self.ensembles}) != 1:
            raise ArtifactError("all JOUS ensembles must have the same number of features")

    @property
    def n_features(self) -> int:
        return int(self.ensembles[0].n_features)

    @property
    def n_classes(self) -> int:
        return 2

    def quantile_decisions(self, X: np.ndarray) -> np.ndarray:
        """Raw ``D_q(x)`` (F_q(x) > 0), shape (n, delta - 1), columns q = 1/delta, ...."""
        return np.column_stack([e.decision_function(X) > 0 for e in self.ensembles])

    def proba(self, X: np.ndarray) -> np.ndarray:
        """``[1 - p_hat, p_hat]`` with ``p_hat`` of section 4 (grid values only)."""
        p1 = grid_probability(self.quantile_decisions(X))
        return np.column_stack([1.0 - p1, p1])

    def to_parts(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        arrays: dict[str, np.ndarray] = {}
        for i, e in enumerate(self.ensembles, start=1):
            arrays.update(split_arrays(f"q{i}", e))
        return {"delta": self.delta, "ensemble_kinds": [e.kind for e in self.ensembles]}, arrays

    @classmethod
    def from_parts(
        cls, spec: dict[str, Any], arrays: dict[str, np.ndarray], n_features: int
    ) -> JousScorer:
        delta = check_delta(spec.get("delta"), ArtifactError)
        kinds = spec.get("ensemble_kinds")
        if not isinstance(kinds, list) or len(kinds) != delta - 1:
            raise ArtifactError(f"ensemble_kinds must be a list of {delta - 1} kinds")
        prefixes = {f"q{i}" for i in range(1, delta)}
        stray = sorted(k for k in arrays if k.split("/", 1)[0] not in prefixes)
        if stray:
            raise ArtifactError(f"unexpected arrays in a JOUS artifact: {stray[:5]}")
        ensembles = tuple(
            join_arrays(f"q{i}", arrays, kind, n_features) for i, kind in enumerate(kinds, 1)
        )
        return cls(ensembles, delta)
