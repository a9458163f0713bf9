"""Scorers: the numpy-only part of a model that turns features into class probabilities.

A scorer holds arrays and numbers only. It is what an artifact stores (a JSON-able
description plus named numeric arrays) and what the service calls on every request.
Each model family contributes one scorer kind; the allow-list of kinds is written out
in :data:`models.inference.artifacts.SCORER_KINDS` (not filled in by import side effects), so
loading an artifact never imports or looks up anything by a name found in the artifact.

Protocol (see :class:`Scorer`):

``proba(X)``
    ``(n, K)`` class probabilities, rows summing to one, columns in class order.
``to_parts()``
    ``(spec, arrays)``: a JSON-able dict and a dict of numeric arrays.
``from_parts(spec, arrays, n_features)``
    Rebuild and validate; raise :class:`~models.exceptions.ArtifactError` on anything
    malformed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from models.calibration.calibrators import Calibrator, calibrator_from_state
from models.exceptions import ArtifactError
from models.inference.ensemble import Ensemble

__all__ = [
    "Scorer",
    "BinaryScorer",
    "CalibratedBinaryScorer",
    "TwoStepScorer",
    "binary_spec",
    "split_arrays",
    "join_arrays",
]


@runtime_checkable
class Scorer(Protocol):
    """Features -> class probabilities, numpy only."""

    kind: ClassVar[str]

    @property
    def n_features(self) -> int: ...

    @property
    def n_classes(self) -> int: ...

    def proba(self, X: np.ndarray) -> np.ndarray: ...

    def to_parts(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]: ...

    @classmethod
    def from_parts(
        cls, spec: dict[str, Any], arrays: dict[str, np.ndarray], n_features: int
    ) -> Scorer: ...


def split_arrays(prefix: str, ensemble: Ensemble) -> dict[str, np.ndarray]:
    """An ensemble's arrays under ``prefix/`` (for scorers holding several ensembles)."""
    return {f"{prefix}/{k}": v for k, v in ensemble.to_arrays().items()}


def join_arrays(prefix: str, arrays: dict[str, np.ndarray], kind: Any, n_features: int) -> Ensemble:
    """Inverse of :func:`split_arrays`, validated by :meth:`Ensemble.from_arrays`."""
    if not isinstance(kind, str):
        raise ArtifactError(f"ensemble kind of {prefix!r} must be a string")
    part = {k[len(prefix) + 1 :]: v for k, v in arrays.items() if k.startswith(prefix + "/")}
    return Ensemble.from_arrays(part, kind=kind, n_features=n_features)


class TwoStepScorer:
    """``proba(X)`` in two steps, :meth:`raw_score` then :meth:`proba_from_raw` (the raw
    scores are what recalibration refits a map on)."""

    def raw_score(self, X: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def proba_from_raw(self, raw: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def proba(self, X: np.ndarray) -> np.ndarray:
        return self.proba_from_raw(self.raw_score(X))


class CalibratedBinaryScorer(TwoStepScorer):
    """Two classes, one calibration map ``calibrator`` of the raw score (shared by one
    booster's and the fold ensemble's scorer)."""

    calibrator: Calibrator

    @property
    def n_classes(self) -> int:
        return 2

    def proba_from_raw(self, raw: np.ndarray) -> np.ndarray:
        """``[1 - p, p]`` per row, ``p`` the calibrated probability of ``classes[1]``."""
        p1 = self.calibrator.predict(raw)
        out = np.empty((raw.shape[0], 2), dtype=np.float64)
        out[:, 1] = p1
        out[:, 0] = 1.0 - p1
        return out


def binary_spec(spec: dict[str, Any]) -> tuple[str, Calibrator]:
    """The ``score_kind`` and the calibration map of a binary scorer's stored spec."""
    if spec.get("score_kind") not in ("vote", "logistic"):
        raise ArtifactError(f"unknown score_kind {spec.get('score_kind')!r}")
    state = spec.get("calibrator")
    if not isinstance(state, dict):
        raise ArtifactError("scorer calibrator state must be a JSON object")
    return spec["score_kind"], calibrator_from_state(state)


@dataclass(frozen=True)
class BinaryScorer(CalibratedBinaryScorer):
    """One boosted ensemble, a raw score and a calibration map: P(y = classes[1] | x).

    Parameters
    ----------
    ensemble : Ensemble
        Boosted weak learners.
    score_kind : {"vote", "logistic"}
        s(x) (Eq. 24) or s'(x) = 1 / (1 + exp(-2 F(x))) (Eq. 25) of Nikolaou et al.
    calibrator : Calibrator
        Map from the raw score to a probability ("none" keeps the raw score).
    """

    kind: ClassVar[str] = "binary"
    ensemble: Ensemble
    score_kind: str
    calibrator: Calibrator

    @property
    def n_features(self) -> int:
        return int(self.ensemble.n_features)

    def raw_score(self, X: np.ndarray) -> np.ndarray:
        """The score the calibrator takes, shape (n,): s(x) or s'(x)."""
        return self.ensemble.score(X, self.score_kind)

    def explain_raw(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(bias (n,), contributions (n, d))`` of :meth:`raw_score`
        (:mod:`models.inference.explanation`)."""
        return self.ensemble.explain_score(X, self.score_kind)

    def with_calibrator(self, calibrator: Calibrator) -> BinaryScorer:
        """The same ensemble (the same arrays, not a copy) with another calibration map."""
        return BinaryScorer(self.ensemble, self.score_kind, calibrator)

    def to_parts(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        spec = {
            "ensemble_kind": self.ensemble.kind,
            "score_kind": self.score_kind,
            "calibrator": self.calibrator.to_state(),
        }
        return spec, split_arrays("ensemble", self.ensemble)

    @classmethod
    def from_parts(
        cls, spec: dict[str, Any], arrays: dict[str, np.ndarray], n_features: int
    ) -> BinaryScorer:
        score_kind, calibrator = binary_spec(spec)
        ensemble = join_arrays("ensemble", arrays, spec.get("ensemble_kind"), n_features)
        return cls(ensemble, score_kind, calibrator)
