"""Recalibration without retraining: a new calibration map over a fitted booster's scores.

Calibrated AdaMEC keeps boosting and calibration apart (Nikolaou et al. 2016,
section 4): the booster's raw score ``s(x)`` (Eq. 24, or ``s'(x)``, Eq. 25) is mapped to
a probability by a calibrator fitted on data the boosting never saw. When the traffic
drifts so that the probabilities are no longer calibrated, but the scores still rank
well, only the map needs refitting: Platt scaling (with Platt's target correction) or
isotonic regression on the parent's raw scores of newly labelled rows. The booster is
untouched, so its arrays are shared with the parent (see :mod:`models.artifacts`,
format version 3).

A stratified ``holdout_fraction`` of the labelled rows is kept out of the fit, and the
calibration of the parent and of the recalibrated model are measured on it (Brier
score, log loss, ECE, Spiegelhalter's z and Hosmer-Lemeshow, :mod:`models.monitoring`).

The recalibrated model's training priors are the class shares of the rows its
calibrator was fitted on: its probabilities are calibrated for that class balance, and
:func:`models.decisions.apply_prior_shift` adjusts from there.

References
----------
.. [1] Nikolaou, N., Edakunni, N., Kull, M., Flach, P., Brown, G. (2016). Cost-sensitive
   boosting algorithms: Do we really need them? Machine Learning 104, section 4.
.. [2] Platt, J. C. (1999). Probabilistic outputs for support vector machines.
.. [3] Zadrozny, B., Elkan, C. (2002). Transforming classifier scores into accurate
   multiclass probability estimates. KDD.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.model_selection import StratifiedShuffleSplit

from models.calibration import Calibrator, make_calibrator
from models.decisions import class_priors
from models.exceptions import InvalidInput, TrainingError
from models.fold_ensemble import FoldEnsembleScorer
from models.inference import InferenceModel, check_features, remove_training_skew
from models.monitoring import calibration_summary
from models.scorers import BinaryScorer

__all__ = [
    "MIN_CLASS_ROWS",
    "MIN_ROWS",
    "RECALIBRATION_METHODS",
    "Recalibration",
    "check_recalibratable",
    "raw_scores",
    "recalibrate",
    "recalibrate_scores",
]

#: Calibration maps a recalibration can fit.
RECALIBRATION_METHODS: tuple[str, ...] = ("platt", "isotonic")
#: Fewest labelled rows accepted, and fewest rows of each class.
MIN_ROWS = 30
MIN_CLASS_ROWS = 10


@dataclass(frozen=True, eq=False)
class Recalibration:
    """A recalibrated model and what was measured.

    Attributes
    ----------
    model : InferenceModel
        The parent's scorer with the new calibrator (the same ensemble object), rule
        ``"threshold"``, training priors = class shares of the fit rows.
    calibrator : Calibrator
        The fitted map.
    method : str
        ``"platt"`` or ``"isotonic"``.
    fit_rows, holdout_rows : ndarray of int
        Positions (into the given rows) used to fit the map and to measure it.
    class_counts : list of int
        Rows of each class (model class order), all rows.
    before, after : dict
        :func:`models.monitoring.calibration_summary` of the parent's and the new
        probabilities on the held-out rows.
    """

    model: InferenceModel
    calibrator: Calibrator
    method: str
    fit_rows: np.ndarray
    holdout_rows: np.ndarray
    class_counts: list[int]
    before: dict[str, Any]
    after: dict[str, Any]

    def summary(self) -> dict[str, Any]:
        """JSON-able facts: method, row counts, metrics before and after."""
        return {
            "method": self.method,
            "n_rows": int(self.fit_rows.size + self.holdout_rows.size),
            "n_fit": int(self.fit_rows.size),
            "n_holdout": int(self.holdout_rows.size),
            "class_counts": list(self.class_counts),
            "before": self.before,
            "after": self.after,
        }


def check_recalibratable(model: InferenceModel) -> BinaryScorer | FoldEnsembleScorer:
    """The model's binary scorer; InvalidInput says why a model cannot be recalibrated.

    Only binary models with one calibration map over one raw score per row can be
    recalibrated: one boosted ensemble (scorer kind ``"binary"``) or a fold ensemble
    (``"binary_folds"``, whose raw score is the mean of its fold boosters' scores,
    :mod:`models.fold_ensemble`). Multiclass and JOUS-Boost models combine several scores.
    """
    scorer = model.scorer
    if not isinstance(scorer, BinaryScorer | FoldEnsembleScorer) or model.n_classes != 2:
        raise InvalidInput(
            f"recalibration needs a binary model with one calibrated score (scorer kind "
            f"'binary' or 'binary_folds'); this model's scorer is {scorer.kind!r} with "
            f"{model.n_classes} classes"
        )
    return scorer


def raw_scores(model: InferenceModel, X: ArrayLike) -> np.ndarray:
    """The raw scores the model's calibrator takes for rows ``X`` (validated features)."""
    scorer = check_recalibratable(model)
    return scorer.raw_score(check_features(X, model.n_features))


def _check_labels(y_index: ArrayLike, n: int) -> np.ndarray:
    try:
        y = np.asarray(y_index)
    except (TypeError, ValueError):
        raise InvalidInput("labels: expected one class index per row") from None
    if y.shape != (n,):
        raise InvalidInput(f"labels: expected {n} labels (one per row), got shape {y.shape}")
    if n and not np.issubdtype(y.dtype, np.integer):
        raise InvalidInput(f"labels: expected class indices 0 or 1, got dtype {y.dtype}")
    bad = (y != 0) & (y != 1)
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise InvalidInput(f"labels: row {r}: expected class index 0 or 1, got {y[r]}")
    return y.astype(np.int64)


def _split(
    y: np.ndarray, holdout_fraction: float, random_state: int | None
) -> tuple[np.ndarray, np.ndarray]:
    sss = StratifiedShuffleSplit(n_splits=1, test_size=holdout_fraction, random_state=random_state)
    fit, hold = next(sss.split(np.zeros(y.size), y))
    return np.sort(fit), np.sort(hold)


def recalibrate_scores(
    model: InferenceModel,
    scores: ArrayLike,
    y_index: ArrayLike,
    method: str = "platt",
    *,
    holdout_fraction: float = 0.3,
    random_state: int | None = 0,
    min_rows: int = MIN_ROWS,
    min_class_rows: int = MIN_CLASS_ROWS,
) -> Recalibration:
    """Fit a new calibration map for ``model`` on raw scores of labelled rows.

    Parameters
    ----------
    model : InferenceModel
        The parent: a binary model (see :func:`check_recalibratable`).
    scores : array-like of shape (n,)
        The parent's raw scores of the labelled rows (:func:`raw_scores`, or the scores
        logged when the rows were predicted).
    y_index : array-like of int, shape (n,)
        Class index of each row (1 = ``model.classes[1]``).
    method : {"platt", "isotonic"}
        The calibration map.
    holdout_fraction : float, default 0.3
        Stratified share of rows kept out of the fit to measure before and after, in
        ``(0, 0.5]``.
    random_state : int or None, default 0
        Seed of the split.
    min_rows, min_class_rows : int
        Fewest rows, and fewest rows of each class, accepted.

    Returns
    -------
    Recalibration

    Raises
    ------
    InvalidInput
        Unknown method, bad fraction, malformed scores or labels (the row is named).
    TrainingError
        Too few rows, or too few of one class (the message says how many of each).
    """
    scorer = check_recalibratable(model)
    if method not in RECALIBRATION_METHODS:
        raise InvalidInput(f"method: expected one of {list(RECALIBRATION_METHODS)}, got {method!r}")
    if not (
        isinstance(holdout_fraction, int | float)
        and not isinstance(holdout_fraction, bool)
        and 0.0 < holdout_fraction <= 0.5
    ):
        raise InvalidInput(
            f"holdout_fraction: expected a number in (0, 0.5], got {holdout_fraction!r}"
        )
    try:
        s = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidInput("scores: expected a 1-D array of numbers") from None
    if s.ndim != 1 or not np.all(np.isfinite(s)):
        raise InvalidInput("scores: expected a 1-D array of finite numbers")
    y = _check_labels(y_index, s.size)
    counts = np.bincount(y, minlength=2)
    classes = model.classes
    if s.size < min_rows:
        raise TrainingError(
            f"labels: too few labelled rows: got {s.size}, recalibration needs at least "
            f"{min_rows} (at least {min_class_rows} of each class)"
        )
    if counts.min() == 0:
        present = classes[int(np.argmax(counts))]
        raise TrainingError(
            f"labels: all {s.size} labelled rows are of class {present!r}; recalibration "
            f"needs both classes {list(classes)} (at least {min_class_rows} rows of each)"
        )
    if counts.min() < min_class_rows:
        few = int(np.argmin(counts))
        raise TrainingError(
            f"labels: class {classes[few]!r} has {int(counts[few])} labelled rows; "
            f"recalibration needs at least {min_class_rows} of each class"
        )
    need_hold = math.ceil(1.0 / holdout_fraction)
    if counts.min() < need_hold:  # a stratified split would leave a class out of a part
        raise TrainingError(
            f"labels: class {classes[int(np.argmin(counts))]!r} has {int(counts.min())} rows; "
            f"a holdout_fraction of {holdout_fraction:g} needs at least {need_hold}"
        )
    fit, hold = _split(y, float(holdout_fraction), random_state)
    calibrator = make_calibrator(method).fit(s[fit], y[fit])
    new_model = replace(
        model,
        scorer=scorer.with_calibrator(calibrator),
        train_priors=class_priors(y[fit], 2),
        rule="threshold",
    )
    before = scorer.calibrator.predict(s[hold])
    after = calibrator.predict(s[hold])
    if model.rule == "skew_change" and model.training_skew is not None:
        # what the parent's decisions used: the training skew removed (models.inference)
        before = remove_training_skew(np.column_stack([1 - before, before]), model.training_skew)[
            :, 1
        ]
    return Recalibration(
        model=new_model,
        calibrator=calibrator,
        method=method,
        fit_rows=fit,
        holdout_rows=hold,
        class_counts=[int(c) for c in counts],
        before=calibration_summary(y[hold], np.column_stack([1 - before, before])),
        after=calibration_summary(y[hold], np.column_stack([1 - after, after])),
    )


def recalibrate(
    model: InferenceModel, X: ArrayLike, y_index: ArrayLike, method: str = "platt", **kwargs: Any
) -> Recalibration:
    """:func:`recalibrate_scores` on the parent's raw scores of feature rows ``X``.

    ``X`` is validated as for prediction (:func:`models.inference.check_features`: the
    model's number of features, no infinities). Keyword arguments are those of
    :func:`recalibrate_scores`.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_classification
    >>> from models import AdaBoost, CalibratedBoosting
    >>> X, y = make_classification(900, 6, random_state=0)
    >>> parent = CalibratedBoosting(AdaBoost(n_estimators=30), random_state=0).fit(X[:600], y[:600])
    >>> served = parent.to_inference()
    >>> rec = recalibrate(served, X[600:], y[600:], "isotonic")
    >>> rec.model.scorer.ensemble is served.scorer.ensemble  # the booster is shared
    True
    >>> rec.summary()["n_fit"], rec.summary()["n_holdout"]
    (210, 90)
    """
    return recalibrate_scores(model, raw_scores(model, X), y_index, method, **kwargs)
