"""Recalibration without retraining: a new calibration map over a fitted booster's scores.

Calibrated AdaMEC keeps boosting and calibration apart (Nikolaou et al. 2016,
section 4): the booster's raw score ``s(x)`` (Eq. 24, or ``s'(x)``, Eq. 25) is mapped to
a probability by a calibrator fitted on data the boosting never saw. When the traffic
drifts so that the probabilities are no longer calibrated, but the scores still rank
well, only the map needs refitting: Platt scaling (with Platt's target correction) or
isotonic regression on the parent's raw scores of newly labelled rows. The booster is
untouched, so its arrays are shared with the parent (see :mod:`models.inference.artifacts`,
format version 3).

Multiclass models (K > 2) whose probabilities come from a calibration over raw class
scores are recalibrated the same way: the scorer refits its own kind of calibration on
the ``(n, K)`` raw scores (``refit_calibration``; SAMME and one-vs-rest AdaBoost: one
Platt or isotonic map per class, class ``k`` against the rest, normalised, as Zadrozny
and Elkan 2002), and the metrics are the multiclass Brier score, log loss and the ECE
of the top label and per class. Angle-based models and JOUS-Boost have no calibration
map over a score; :func:`check_recalibratable` says so.

A stratified ``holdout_fraction`` of the labelled rows is kept out of the fit, and the
calibration of the parent and of the recalibrated model are measured on it (Brier
score, log loss, ECE, Spiegelhalter's z and Hosmer-Lemeshow, :mod:`models.feedback.monitoring`).

The recalibrated model's training priors are the class shares of the rows its
calibrator was fitted on: its probabilities are calibrated for that class balance, and
:func:`models.decisions.rule.apply_prior_shift` adjusts from there.

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

from models.calibration.calibrators import make_calibrator
from models.decisions.rule import class_priors
from models.exceptions import InvalidInput, TrainingError
from models.feedback.monitoring import calibration_summary
from models.inference.fold_ensemble import FoldEnsembleScorer
from models.inference.model import InferenceModel, check_features, remove_training_skew
from models.inference.scorers import BinaryScorer

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
RECALIBRATION_METHODS: tuple[str, ...] = ("platt", "isotonic", "multinomial")
"""``multinomial`` (one softmax map of the K raw class scores) for SAMME models only."""
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
    calibrator : Calibrator or tuple of Calibrator
        The fitted map (binary), or the new scorer's maps, one per class (multiclass).
    method : str
        ``"platt"`` or ``"isotonic"``.
    fit_rows, holdout_rows : ndarray of int
        Positions (into the given rows) used to fit the map and to measure it.
    class_counts : list of int
        Rows of each class (model class order), all rows.
    before, after : dict
        :func:`models.feedback.monitoring.calibration_summary` of the parent's and the new
        probabilities on the held-out rows.
    holdout_proba : ndarray of shape (n_holdout, K)
        The recalibrated model's probabilities of the held-out rows.
    """

    model: InferenceModel
    calibrator: Any
    method: str
    fit_rows: np.ndarray
    holdout_rows: np.ndarray
    class_counts: list[int]
    before: dict[str, Any]
    after: dict[str, Any]
    holdout_proba: np.ndarray

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


#: Why the scorer kinds that cannot be recalibrated cannot (a 422 says it).
_NOT_RECALIBRATABLE = {
    "angle": (
        "angle-based models decide by the least-angle rule and their probabilities are the "
        "plug-in estimate of Theorem 2 (Yang et al. 2020) computed from the scores and the "
        "training costs: there is no calibration map over a score to refit"
    ),
    "jous": (
        "JOUS-Boost estimates probabilities by combining many jittered, over/under-sampled "
        "classifiers (Mease et al. 2007, section 4), not by a calibration map over one raw "
        "score: there is no map to refit"
    ),
}


def check_recalibratable(model: InferenceModel) -> Any:
    """The model's scorer; InvalidInput says why a model cannot be recalibrated.

    Two kinds of scorers can: a binary one (scorer kind ``"binary"``: one boosted
    ensemble and one calibration map over its raw score, one number per row; or
    ``"binary_folds"``, a fold ensemble whose raw score is the mean of its fold
    boosters' scores, :mod:`models.inference.fold_ensemble`), and a
    multiclass one whose calibration is fitted on per-row raw class scores, shape
    ``(n, K)``: it has ``raw_score``, ``proba_from_raw`` and
    ``refit_calibration(method, raw, y_index)`` returning the same ensemble with a new
    calibration (SAMME's per-class maps, one-vs-rest AdaBoost's members' maps). Others
    (angle-based, JOUS-Boost) have no calibration map to refit.
    """
    scorer = model.scorer
    if isinstance(scorer, BinaryScorer | FoldEnsembleScorer) and model.n_classes == 2:
        return scorer
    if model.n_classes > 2 and all(
        callable(getattr(scorer, name, None))
        for name in ("raw_score", "proba_from_raw", "refit_calibration")
    ):
        return scorer
    why = _NOT_RECALIBRATABLE.get(
        scorer.kind,
        "only models whose probabilities come from a calibration map over the booster's "
        "raw score (binary) or raw class scores (multiclass) can be recalibrated",
    )
    raise InvalidInput(
        f"this model (scorer kind {scorer.kind!r}, {model.n_classes} classes) cannot be "
        f"recalibrated: {why}"
    )


def raw_scores(model: InferenceModel, X: ArrayLike) -> np.ndarray:
    """The raw scores the model's calibrator takes for rows ``X`` (validated features)."""
    scorer = check_recalibratable(model)
    return scorer.raw_score(check_features(X, model.n_features))


def _check_labels(y_index: ArrayLike, n: int, k: int = 2) -> np.ndarray:
    expected = "0 or 1" if k == 2 else f"0 to {k - 1}"
    try:
        y = np.asarray(y_index)
    except (TypeError, ValueError):
        raise InvalidInput("labels: expected one class index per row") from None
    if y.shape != (n,):
        raise InvalidInput(f"labels: expected {n} labels (one per row), got shape {y.shape}")
    if n and not np.issubdtype(y.dtype, np.integer):
        raise InvalidInput(f"labels: expected class indices {expected}, got dtype {y.dtype}")
    bad = (y < 0) | (y >= k)
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise InvalidInput(f"labels: row {r}: expected class index {expected}, got {y[r]}")
    return y.astype(np.int64)


def _rows_needed(holdout_fraction: float) -> int | None:
    """Rows of each class a stratified split with this holdout fraction needs (one
    held-out row per class: ``ceil(1 / fraction)``), or None when that is beyond any
    data set (a subnormal fraction such as 5e-324 makes ``1 / fraction`` infinite)."""
    need = 1.0 / holdout_fraction if holdout_fraction > 0 else math.inf
    return math.ceil(need) if need < 2**53 else None


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
        The parent: a binary model, or a multiclass one with a calibration over raw
        class scores (see :func:`check_recalibratable`).
    scores : array-like of shape (n,), or (n, K) for K > 2 classes
        The parent's raw scores of the labelled rows (:func:`raw_scores`, or the scores
        logged when the rows were predicted).
    y_index : array-like of int, shape (n,)
        Class index of each row (model class order; 1 = ``model.classes[1]`` for two).
    method : {"platt", "isotonic"}
        The calibration map (for K > 2: one map per class, normalised).
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
    k = model.n_classes
    if method not in RECALIBRATION_METHODS:
        raise InvalidInput(f"method: expected one of {list(RECALIBRATION_METHODS)}, got {method!r}")
    if method == "multinomial" and k == 2:
        raise InvalidInput(
            "method: 'multinomial' is for more than two classes; a two-class model takes "
            "'platt' or 'isotonic'"
        )
    if not (
        isinstance(holdout_fraction, int | float)
        and not isinstance(holdout_fraction, bool)
        and 0.0 < holdout_fraction <= 0.5
    ):
        raise InvalidInput(
            f"holdout_fraction: expected a number in (0, 0.5], got {holdout_fraction!r}"
        )
    shape = "a 1-D array" if k == 2 else f"an (n, {k}) array (one raw score per class)"
    try:
        s = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidInput(f"scores: expected {shape} of numbers") from None
    ok_shape = s.ndim == 1 if k == 2 else (s.ndim == 2 and s.shape[1] == k)
    if not ok_shape or not np.all(np.isfinite(s)):
        raise InvalidInput(f"scores: expected {shape} of finite numbers, got shape {s.shape}")
    n = s.shape[0]
    y = _check_labels(y_index, n, k)
    counts = np.bincount(y, minlength=k)
    classes = [c.item() if isinstance(c, np.generic) else c for c in model.classes]  # messages
    if n < min_rows:
        raise TrainingError(
            f"labels: too few labelled rows: got {n}, recalibration needs at least "
            f"{min_rows} (at least {min_class_rows} of each class)"
        )
    if np.count_nonzero(counts) == 1:
        present = classes[int(np.argmax(counts))]
        which = "both classes" if k == 2 else f"all {k} classes"
        raise TrainingError(
            f"labels: all {n} labelled rows are of class {present!r}; recalibration "
            f"needs {which} {list(classes)} (at least {min_class_rows} rows of each)"
        )
    if counts.min() < min_class_rows:
        few = int(np.argmin(counts))
        raise TrainingError(
            f"labels: class {classes[few]!r} has {int(counts[few])} labelled rows; "
            f"recalibration needs at least {min_class_rows} of each class"
            + ("" if k == 2 else " (one calibration map per class)")
        )
    need_hold = _rows_needed(holdout_fraction)
    if need_hold is None or counts.min() < need_hold:  # a class would miss from a part
        need = f"at least {need_hold}" if need_hold is not None else "more than 2**53"
        raise TrainingError(
            f"labels: class {classes[int(np.argmin(counts))]!r} has {int(counts.min())} rows; "
            f"a holdout_fraction of {holdout_fraction:g} needs {need} rows of each class "
            "(one held-out row per class); raise holdout_fraction"
        )
    fit, hold = _split(y, float(holdout_fraction), random_state)
    if k == 2:
        calibrator: Any = make_calibrator(method).fit(s[fit], y[fit])
        new_scorer = scorer.with_calibrator(calibrator)
    else:  # the scorer's own kind of calibration, refitted (models.inference.multiclass_scorers)
        new_scorer = scorer.refit_calibration(method, s[fit], y[fit])
        calibrator = getattr(new_scorer, "joint", None) or tuple(
            getattr(new_scorer, "calibrators", ())
        )
    new_model = replace(
        model,
        scorer=new_scorer,
        train_priors=class_priors(y[fit], k),
        rule="threshold",
    )
    before = scorer.proba_from_raw(s[hold])
    after = new_scorer.proba_from_raw(s[hold])
    if model.rule == "skew_change" and model.training_skew is not None:
        # what the parent's decisions used: the training skew removed (models.inference.model)
        before = remove_training_skew(before, model.training_skew)
    return Recalibration(
        model=new_model,
        calibrator=calibrator,
        method=method,
        fit_rows=fit,
        holdout_rows=hold,
        class_counts=[int(c) for c in counts],
        before=calibration_summary(y[hold], before),
        after=calibration_summary(y[hold], after),
        holdout_proba=after,
    )


def recalibrate(
    model: InferenceModel, X: ArrayLike, y_index: ArrayLike, method: str = "platt", **kwargs: Any
) -> Recalibration:
    """:func:`recalibrate_scores` on the parent's raw scores of feature rows ``X``.

    ``X`` is validated as for prediction (:func:`models.inference.model.check_features`: the
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
