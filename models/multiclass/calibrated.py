"""Calibrated multiclass probabilities from a vote-based booster (SAMME).

The booster's raw class scores ``s_k(x)`` (vote fractions, or softmax of the votes;
see :mod:`models.multiclass.samme`) are distorted like binary boosting scores (Theorem 2
and section 4 of Nikolaou et al.). Each class gets its own binary calibration map
(:mod:`models.calibration.calibrators`: Platt with Platt's target correction, or isotonic), fitted
on ``(s_k(x_i), I(y_i = k))`` for rows the booster never saw, and the K calibrated values
are normalised to sum to one (Zadrozny and Elkan 2002).

Why per-class maps and not one softmax temperature: a temperature ``softmax(s / T)``
keeps SAMME's ranking of classes inside a row and rescales all classes alike, so it
cannot correct class-specific distortions (e.g. a class whose votes are systematically
too low); per-class maps can, reuse the binary calibrators (and their artifact states)
of the core unchanged, and for K = 2 reduce to the calibrated AdaMEC of Nikolaou et
al. (Platt on ``s`` and on ``1 - s`` with flipped labels are complementary). The
test-suite checks that the calibrated probabilities beat the raw scores on held-out
Brier score.

Splits as :class:`models.boosting.calibrated.CalibratedBoosting`: ``"holdout"`` (stratified
``calibration_fraction`` of the rows calibrates, the rest boosts) or ``"kfold"``
(out-of-fold scores of ``n_folds`` boosters calibrate; the kept booster is refitted on
all rows); ``calibration="none"`` keeps the raw scores.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone

from models.boosting.crossfit import (
    SPLITS,
    OutOfFold,
    check_split_params,
    cross_calibrated,
    cross_fit,
    labelled_rows,
)
from models.calibration.calibrators import make_calibrator
from models.decisions.rule import Decisions, class_priors
from models.exceptions import NotFitted, TrainingError
from models.inference.model import InferenceModel
from models.inference.multiclass_scorers import CalibratedVoteScorer, normalise_rows
from models.multiclass.samme import SAMME
from models.specs.estimator_params import declared_init

__all__ = [
    "CALIBRATION_PARAMS",
    "CalibratedMulticlass",
    "ServedByThreshold",
    "check_calibration_params",
    "SPLITS",
]

#: The calibration settings of the multiclass estimators and their defaults, in order
#: (:class:`CalibratedMulticlass`, one-vs-rest AdaBoost).
CALIBRATION_PARAMS: dict[str, Any] = {
    "calibration": "platt",
    "calibration_split": "holdout",
    "calibration_fraction": 1.0 / 3.0,
    "n_folds": 5,
}


def check_calibration_params(method: str, split: str, fraction: float, n_folds: int) -> None:
    """Validate calibration settings (messages name the parameter)."""
    make_calibrator(method)  # raises InvalidInput for unknown methods
    check_split_params(split, fraction, n_folds, split_name="calibration_split")


def _fit_maps(method: str, scores: np.ndarray, y_idx: np.ndarray, w: np.ndarray | None) -> list:
    return [
        make_calibrator(method).fit(scores[:, j], (y_idx == j).astype(np.int8), w)
        for j in range(scores.shape[1])
    ]


def _apply_maps(maps: list, scores: np.ndarray) -> np.ndarray:
    return normalise_rows(np.column_stack([c.predict(scores[:, j]) for j, c in enumerate(maps)]))


def out_of_fold_multiclass(
    method: str,
    scores: np.ndarray,
    y_idx: np.ndarray,
    sample_weight: np.ndarray | None,
    folds: Sequence[tuple[np.ndarray, np.ndarray]],
) -> OutOfFold | None:
    """Cross-calibrated out-of-fold probabilities of k-fold class scores (None without)."""
    if not folds:  # hold-out split
        return None
    proba = cross_calibrated(
        lambda s, y, w: _fit_maps(method, s, y, w), _apply_maps, scores, y_idx, sample_weight,
        folds,
    )  # fmt: skip
    info = {"scheme": "cross-fitted calibration", "n_folds": len(folds)}
    return OutOfFold(proba, normalise_rows(scores), np.arange(len(y_idx)), info)


class ServedByThreshold:
    """Prediction of a calibrated multiclass estimator, served with the ``"threshold"``
    rule (least expected cost at any request costs).

    A subclass names the attribute its fit sets (``_fitted_attr``) and gives the scorer it
    serves (:meth:`_scorer`) and the booster whose feature names it keeps
    (:meth:`_named_booster`).
    """

    _fitted_attr: str
    classes_: np.ndarray
    class_priors_: np.ndarray

    def _scorer(self) -> Any:
        raise NotImplementedError

    def _named_booster(self) -> Any:
        raise NotImplementedError

    def _check_fitted(self) -> None:
        if not hasattr(self, self._fitted_attr):
            raise NotFitted(f"{type(self).__name__} is not fitted yet; call fit(X, y) first")

    def predict(self, X: Any) -> np.ndarray:
        """Least expected cost under 0-1 costs (argmax p; ties to the higher index)."""
        return self.classes_[self.decide(X, None).labels_index]

    def decide(self, X: Any, costs: Any, priors: Any = None) -> Decisions:
        """Least-expected-cost decisions under a K x K ``costs`` (see models.decisions.rule)."""
        return self.to_inference().decide(X, costs, priors=priors)

    def to_inference(self, feature_names: list[str] | None = None) -> InferenceModel:
        """Numpy-only model served with the ``"threshold"`` rule (any request costs)."""
        self._check_fitted()
        names = feature_names
        booster = self._named_booster()
        if names is None and hasattr(booster, "feature_names_in_"):
            names = [str(n) for n in booster.feature_names_in_]
        return InferenceModel(
            classes=tuple(self.classes_.tolist()),
            feature_names=None if names is None else tuple(names),
            scorer=self._scorer(),
            train_priors=np.asarray(self.class_priors_, dtype=np.float64),
            training_costs=None,
            rule="threshold",
        )


class CalibratedMulticlass(ServedByThreshold, ClassifierMixin, BaseEstimator):
    """A vote-based multiclass booster with per-class calibrated, normalised probabilities.

    Parameters
    ----------
    estimator : SAMME or None
        Unfitted booster with ``score_samples(X) -> (n, K)`` raw class scores and a
        ``ensemble_`` :class:`~models.inference.vote_ensemble.VoteEnsemble`; ``None``
        means ``SAMME()``.
    calibration : {"platt", "isotonic", "none"}, default="platt"
        Calibration map per class; ``"none"`` serves the raw scores (booster on all rows).
    calibration_split : {"holdout", "kfold"}, default="holdout"
        How calibration rows are kept apart from boosting rows (module docstring).
    calibration_fraction : float, default=1/3
        Share of rows that calibrate with ``"holdout"``.
    n_folds : int, default=5
        Folds with ``"kfold"``.
    random_state : int or None
        Seed of the split (and of the booster when it has none).
    n_jobs : int or None
        Threads fitting the folds and the final booster concurrently with ``"kfold"``
        (:mod:`models.boosting.crossfit`); None or -1: every CPU. Same model whatever the value.

    Attributes
    ----------
    classes_ : ndarray of shape (K,)
        Sorted labels.
    estimator_ : SAMME
        The fitted booster whose scores are served.
    calibrators_ : list of Calibrator
        One map per class.
    calibration_info_ : dict
        Method, split, rows used for boosting and calibration.
    class_priors_ : ndarray of shape (K,)
        Class frequencies of the training labels.
    n_estimators_, termination_reason_ : int, str
        Of the served booster.

    References
    ----------
    Zhu et al. (2009) (SAMME); Nikolaou et al. (2016), section 4 (calibration on data
    disjoint from the boosting data); B. Zadrozny, C. Elkan, KDD 2002 (multiclass
    probability estimates from per-class calibration and normalisation).
    """

    __init__ = declared_init(
        {"estimator": None}, CALIBRATION_PARAMS, random_state=None, n_jobs=None
    )

    def _make_booster(self) -> Any:
        booster = SAMME() if self.estimator is None else clone(self.estimator)
        if booster.get_params().get("random_state") is None and self.random_state is not None:
            booster.set_params(random_state=self.random_state)
        return booster

    def progress_total(self, n_classes: int = 3) -> int:
        """The boosting-round count a fit reports as ``total`` (:mod:`models.boosting.progress`).

        ``M`` rounds, times ``n_folds + 1`` with cross-fitted calibration.
        """
        m = int(self._make_booster().get_params()["n_estimators"])
        kfold = self.calibration != "none" and self.calibration_split == "kfold"
        return m * (int(self.n_folds) + 1) if kfold else m

    def _check_booster(self, booster: Any) -> None:
        if not np.array_equal(booster.classes_, self.classes_):
            raise TrainingError("a boosting split lost a class; use more rows per class")

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> CalibratedMulticlass:
        """Fit the booster and one calibrator per class on disjoint rows.

        Raises
        ------
        InvalidInput
            Invalid calibration settings or malformed data.
        TrainingError
            Fewer than two classes, or a class with too few rows for the split.
        """
        check_calibration_params(
            self.calibration, self.calibration_split, self.calibration_fraction, self.n_folds
        )
        X, y, classes, y_idx, counts = labelled_rows(X, y, two_classes=False)
        self.classes_ = classes
        self.class_priors_ = class_priors(y_idx, len(classes), sample_weight)
        n, k = len(y), len(classes)
        sw = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        method, split = self.calibration, self.calibration_split
        if method == "none":
            self.estimator_ = self._make_booster().fit(X, y, sw)
            self.calibrators_ = [make_calibrator("none") for _ in range(k)]
            self.calibration_info_ = {"method": "none", "split": "none", "n_boost": n,
                                      "n_calibration": 0}  # fmt: skip
            self.oof_ = None
            return self._done()
        cf = cross_fit(
            self._make_booster,
            X,
            y,
            y_idx,
            classes,
            sw,
            split=split,
            calibration_fraction=self.calibration_fraction,
            n_folds=int(self.n_folds),
            random_state=self.random_state,
            n_jobs=self.n_jobs,
            check=self._check_booster,
        )
        self.estimator_, scores, cal_rows = cf.estimator, cf.scores, cf.rows
        info = {k: v for k, v in cf.info.items() if k != "split"}
        cal_w = None if sw is None else sw[cal_rows]
        self.calibrators_ = [
            make_calibrator(method).fit(scores[:, j], (y_idx[cal_rows] == j).astype(np.int8), cal_w)
            for j in range(k)
        ]
        self.calibration_info_ = {"method": method, "split": split, **info,
                                  "scheme": "per-class calibration, normalised"}  # fmt: skip
        self.oof_ = out_of_fold_multiclass(method, scores, y_idx, sw, cf.folds)
        return self._done()

    def provides_out_of_fold(self) -> bool:
        """Whether a fit sets ``oof_`` (cross-fitted calibration: ``"kfold"``)."""
        return self.calibration_split == "kfold" and self.calibration != "none"

    def _done(self) -> CalibratedMulticlass:
        self.n_estimators_ = int(self.estimator_.n_estimators_)
        self.termination_reason_ = str(self.estimator_.termination_reason_)
        return self

    # --------------------------------------------------------------- prediction
    _fitted_attr = "calibrators_"

    def predict_proba(self, X: Any) -> np.ndarray:
        """Calibrated, normalised class probabilities, shape (n, K)."""
        self._check_fitted()
        s = self.estimator_.score_samples(X)
        joint = getattr(self, "joint_calibrator_", None)
        if joint is not None:  # one softmax map of the K scores (models.auto)
            return np.asarray(joint.predict_proba(s))
        p = np.column_stack([c.predict(s[:, j]) for j, c in enumerate(self.calibrators_)])
        return normalise_rows(p)

    def _named_booster(self) -> Any:
        return self.estimator_

    def _scorer(self) -> CalibratedVoteScorer:
        return CalibratedVoteScorer(
            self.estimator_.ensemble_,
            self.estimator_.score_kind,
            tuple(self.calibrators_),
            getattr(self, "joint_calibrator_", None),
        )
