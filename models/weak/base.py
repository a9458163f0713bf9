"""Common interface of the weak-learner trainers used by the boosting loop."""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol

import numpy as np

from models.exceptions import InvalidInput
from models.inference.ensemble import Ensemble

__all__ = [
    "CRITERIA",
    "RoundTrainer",
    "Stump",
    "checked_criterion",
    "constant_stump",
    "stumps_ensemble",
]

#: Split criteria of the binned stumps and trees (two-class and multiclass): weighted
#: error, or weighted Gini (scikit-learn's ``DecisionTreeClassifier``).
CRITERIA = ("error", "gini")


def checked_criterion(criterion: str, name: str) -> str:
    """``criterion`` if it is one of :data:`CRITERIA`, else InvalidInput naming ``name``."""
    if criterion not in CRITERIA:
        raise InvalidInput(f"{name} must be one of {CRITERIA}, got {criterion!r}")
    return criterion


class Stump(NamedTuple):
    """One threshold learner: ``left`` if ``x[feature] <= threshold``, ``missing`` if NaN."""

    feature: int
    threshold: float
    left: float
    right: float
    missing: float


def constant_stump(value: float, n: int) -> tuple[Stump, np.ndarray]:
    """The learner of a round in which no feature can be split: ``value`` on every side
    (feature 0, threshold 0), and its outputs on the ``n`` training rows."""
    return Stump(0, 0.0, value, value, value), np.full(n, value)


class RoundTrainer(Protocol):
    """Fits one weak learner per boosting round on fixed training data.

    A trainer is built once per ``fit`` (binning, sorting and other per-fit work happens
    there); :meth:`fit_round` is then called with the current example weights.
    """

    def fit_round(self, w: np.ndarray) -> tuple[object, np.ndarray]:
        """Fit a learner to weights ``w`` (n,), return it and its outputs on the training rows.

        The outputs ``h`` must equal what the assembled :class:`Ensemble` would predict
        on the training rows, so that the weighted error and weight update of the
        boosting loop describe the stored model exactly.
        """
        ...

    def assemble(self, learners: list[object], alphas: np.ndarray) -> Ensemble:
        """Build the inference :class:`Ensemble` from the kept learners and alphas."""
        ...


def stumps_ensemble(learners: list[Stump], alphas: np.ndarray, n_features: int) -> Ensemble:
    """Pack stumps (and logistic learners exported as stumps) into an ``Ensemble``."""
    cols: list[tuple[Any, ...]] = list(zip(*learners, strict=True)) if learners else [()] * 5
    arrays: dict[str, np.ndarray] = {
        "feature": np.asarray(cols[0], dtype=np.int32),
        "threshold": np.asarray(cols[1], dtype=np.float64),
        "value_left": np.asarray(cols[2], dtype=np.float64),
        "value_right": np.asarray(cols[3], dtype=np.float64),
        "value_missing": np.asarray(cols[4], dtype=np.float64),
    }
    return Ensemble("stumps", np.asarray(alphas, dtype=np.float64), arrays, int(n_features))
