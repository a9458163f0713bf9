"""Calibrated AdaMEC: plain AdaBoost, calibrated scores, cost threshold at decision time.

The recommendation of Nikolaou et al. (2016): train the *original* AdaBoost
(cost-insensitive), turn its scores into calibrated probability estimates on data
disjoint from the boosting data, and apply the cost-dependent threshold of Eq. (20)
only when a decision is needed. Because costs enter at decision time only, one fitted
model serves any cost setting, which is what the service exploits.

References
----------
.. [1] N. Nikolaou, N. Edakunni, M. Kull, P. Flach, G. Brown. "Cost-sensitive boosting
   algorithms: Do we really need them?" Machine Learning 104 (2016), section 4
   (calibration) and Theorem 1 (Eq. 20).
.. [2] J. Platt. "Probabilistic outputs for support vector machines and comparisons to
   regularized likelihood methods" (1999).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone

from models.boosting.adaboost import AdaBoost
from models.boosting.crossfit import (
    SPLITS,
    OutOfFold,
    check_split_params,
    cross_calibrated,
    cross_fit,
    labelled_rows,
)
from models.boosting.loop import BaseBoosting
from models.boosting.progress import report
from models.calibration.calibrators import make_calibrator
from models.decisions.rule import Decisions, class_priors
from models.exceptions import NotFitted
from models.inference.model import InferenceModel
from models.inference.scorers import BinaryScorer
from models.specs.estimator_params import declared_init

__all__ = [
    "RAW_SCORES",
    "SPLITS",
    "UNCALIBRATED_RULES",
    "CalibratedAdaMEC",
    "CalibratedBoosting",
    "uncalibrated_rule",
]

#: The raw score of a binary booster by ``score_kind`` (Nikolaou et al. 2016, Eqs. 24-25).
RAW_SCORES: dict[str, str] = {
    "vote": "s(x), the weighted vote fraction (Eq. 24)",
    "logistic": "s'(x) = 1/(1+exp(-2F(x))) (Eq. 25)",
}
#: Which AdaMEC a cost-free booster served with ``method="none"`` is. The paper defines
#: AdaMEC by the vote fraction (Eq. 9, equal to Eq. 19 by Theorem 1) and reads it as a
#: threshold on s'(x) in section 3.4 (Eq. 23); the two rules decide differently and have
#: very different Brier curves (docs/results/nikolaou.md).
UNCALIBRATED_RULES: dict[str, str] = {
    "vote": "AdaMEC as defined by Eq. 9 = Eq. 19 of Nikolaou et al. (2016)",
    "logistic": "AdaMEC as read in section 3.4 / Eq. 23 of Nikolaou et al. (2016)",
}


def uncalibrated_rule(score_kind: str, trained_with_costs: bool) -> str:
    """What ``method="none"`` decides on: the raw score of ``score_kind`` as the probability."""
    if trained_with_costs:
        return (f"threshold on {RAW_SCORES[score_kind]} with the training skew removed "
                "(change of skew, section 5.1 of Nikolaou et al. 2016), uncalibrated")  # fmt: skip
    return f"threshold on {RAW_SCORES[score_kind]}, uncalibrated: {UNCALIBRATED_RULES[score_kind]}"


def _two_columns(p1: np.ndarray) -> np.ndarray:
    return np.column_stack([1.0 - p1, p1])


def out_of_fold_binary(
    method: str,
    scores: np.ndarray,
    y_index: np.ndarray,
    sample_weight: np.ndarray | None,
    folds: Sequence[tuple[np.ndarray, np.ndarray]],
) -> OutOfFold | None:
    """Cross-calibrated out-of-fold probabilities of k-fold scores (None without folds)."""
    if not folds:  # hold-out split: no out-of-fold scores for the boosting rows
        return None
    p1 = cross_calibrated(
        lambda s, y, w: make_calibrator(method).fit(s, y, sample_weight=w),
        lambda cal, s: cal.predict(s),
        scores, y_index, sample_weight, folds,
    )  # fmt: skip
    info = {"scheme": "cross-fitted calibration", "n_folds": len(folds)}
    return OutOfFold.binary(p1, np.asarray(scores, dtype=np.float64), info)


class CalibratedBoosting(ClassifierMixin, BaseEstimator):
    """A booster whose scores are calibrated on data the boosting never saw.

    With the default estimator (plain :class:`~models.boosting.adaboost.AdaBoost`) this is the
    paper's *calibrated AdaMEC*; any other binary booster of :mod:`models` (e.g. a
    cost-sensitive variant) gives its calibrated form.

    Parameters
    ----------
    estimator : BaseBoosting or None
        The (unfitted) binary boosting estimator. ``None`` means ``AdaBoost()`` with its
        defaults (100 stumps, vote-fraction score s(x), Eq. 24).
    method : {"platt", "isotonic", "none"}
        Calibration map fitted on the calibration data. ``"none"`` skips calibration
        and trains the booster on all rows (the paper's uncalibrated AdaMEC): the raw
        score of the booster's ``score_kind`` is the probability, so the decision is a
        threshold on s(x) (``"vote"``, Eq. 24: Eq. 9 = Eq. 19 of [1]_) or on s'(x)
        (``"logistic"``, Eq. 25: section 3.4 / Eq. 23); see :func:`uncalibrated_rule`.
    split : {"holdout", "kfold"}
        ``"holdout"``: a stratified ``calibration_fraction`` of the rows fits the
        calibrator, the rest fits the booster (the paper's protocol, section 5.1).
        ``"kfold"``: cross-fitting, the paper's suggested improvement: out-of-fold
        scores of ``n_folds`` boosters fit one calibrator, and the booster that is
        kept is refitted on all rows, so no row is wasted.
    calibration_fraction : float
        Share of rows used for calibration with ``split="holdout"``; default 1/3.
    n_folds : int
        Number of folds with ``split="kfold"``.
    random_state : int or None
        Seed of the split (and of the booster when it has no seed of its own).
    n_jobs : int or None
        Threads fitting the folds and the final booster concurrently with
        ``split="kfold"`` (:mod:`models.boosting.crossfit`); None or -1: every CPU, 1: one after
        another. The fitted model is the same whatever the value.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        Sorted class labels; ``classes_[1]`` is the positive class.
    estimator_ : BaseBoosting
        The fitted booster that produces the served scores.
    calibrator_ : Calibrator
        The fitted calibration map from scores to P(y = classes_[1] | x).
    calibration_info_ : dict
        What was done: method, split, rows used for boosting and calibration, folds,
        ``score`` (the booster's score kind, the input of the calibration map) and, with
        ``method="none"``, ``uncalibrated_rule`` (:func:`uncalibrated_rule`).
    class_priors_ : ndarray of shape (2,)
        Class frequencies of the training data (for deployment prior shift).
    oof_ : models.boosting.crossfit.OutOfFold or None
        With ``split="kfold"``: out-of-fold calibrated probabilities of every training
        row (:func:`models.boosting.crossfit.cross_calibrated`); else None.

    Examples
    --------
    Train once without costs, then decide at any costs (here a missed positive costs
    five times a false alarm, so the threshold on P(positive) is 1 / (1 + 5)):

    >>> from sklearn.datasets import make_classification
    >>> from models import AdaBoost, CalibratedBoosting, CostMatrix
    >>> X, y = make_classification(600, 8, random_state=0)
    >>> model = CalibratedBoosting(AdaBoost(n_estimators=50), random_state=0).fit(X, y)
    >>> model.predict_proba(X[:3]).shape
    (3, 2)
    >>> decisions = model.decide(X[:5], CostMatrix.from_binary(c_fp=1.0, c_fn=5.0))
    >>> round(float(decisions.threshold[0]), 4)
    0.1667
    """

    __init__ = declared_init(
        estimator=None,
        method="platt",
        split="holdout",
        calibration_fraction=1.0 / 3.0,
        n_folds=5,
        random_state=None,
        n_jobs=None,
    )

    # ------------------------------------------------------------------ fitting
    def _make_booster(self) -> BaseBoosting:
        booster = AdaBoost() if self.estimator is None else clone(self.estimator)
        if booster.get_params().get("random_state") is None and self.random_state is not None:
            booster.set_params(random_state=self.random_state)
        return booster

    def _check_params(self) -> None:
        make_calibrator(self.method)  # raises InvalidInput for unknown methods
        check_split_params(self.split, self.calibration_fraction, self.n_folds)

    def fit(self, X: Any, y: Any, sample_weight: np.ndarray | None = None) -> CalibratedBoosting:
        """Fit the booster and the calibrator on disjoint rows.

        Raises
        ------
        TrainingError
            If ``y`` does not hold exactly two classes, or a class has too few rows
            for the requested calibration split.
        """
        self._check_params()
        X, y, classes, y_index, counts = labelled_rows(X, y, two_classes=True)
        self.classes_ = classes
        self.class_priors_ = class_priors(y_index, 2, sample_weight)
        n = len(y)
        sw = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)

        if self.method == "none":
            self.estimator_ = self._make_booster().fit(X, y, sample_weight=sw)
            self.calibrator_ = make_calibrator("none").fit(
                self.estimator_.score_samples(X), y_index
            )
            kind = str(self.estimator_.score_kind)
            self.calibration_info_ = {
                "method": "none",
                "split": "none",
                "n_boost": n,
                "n_calibration": 0,
                "score": kind,
                "uncalibrated_rule": uncalibrated_rule(
                    kind, getattr(self.estimator_, "training_cost_matrix_", None) is not None
                ),
            }
            self.oof_ = None
            return self

        cf = cross_fit(
            self._make_booster,
            X,
            y,
            y_index,
            classes,
            sw,
            split=self.split,
            calibration_fraction=self.calibration_fraction,
            n_folds=int(self.n_folds),
            random_state=self.random_state,
            n_jobs=self.n_jobs,
        )
        self.estimator_ = cf.estimator
        report(0, 0, "calibrating")
        self.calibrator_ = make_calibrator(self.method).fit(
            cf.scores, y_index[cf.rows], sample_weight=None if sw is None else sw[cf.rows]
        )
        self.calibration_info_ = {
            "method": self.method,
            **cf.info,
            "score": str(self.estimator_.score_kind),
        }
        self.oof_ = out_of_fold_binary(self.method, cf.scores, y_index, sw, cf.folds)
        return self

    def provides_out_of_fold(self) -> bool:
        """Whether a fit sets ``oof_`` (cross-fitted calibration: ``split="kfold"``)."""
        return self.split == "kfold" and self.method != "none"

    # --------------------------------------------------------------- prediction
    def _check_fitted(self) -> None:
        if not hasattr(self, "calibrator_"):
            raise NotFitted(f"{type(self).__name__} is not fitted yet; call fit(X, y) first")

    def predict_proba(self, X: Any) -> np.ndarray:
        """Calibrated class probabilities, shape (n, 2), columns in ``classes_`` order."""
        self._check_fitted()
        p1 = self.calibrator_.predict(self.estimator_.score_samples(X))
        return np.column_stack([1.0 - p1, p1])

    def predict(self, X: Any) -> np.ndarray:
        """Cost-insensitive decision (equal costs): positive iff P(pos) >= 1/2."""
        return self.classes_[(self.predict_proba(X)[:, 1] >= 0.5).astype(np.intp)]

    def decide(self, X: Any, costs: Any, priors: Any = None) -> Decisions:
        """Least-expected-cost decisions under ``costs`` (see :func:`models.decisions.rule.decide`)."""
        return self.to_inference().decide(X, costs, priors=priors)

    def progress_total(self, n_classes: int = 2) -> int:
        """The boosting-round count a fit reports as ``total`` (:mod:`models.boosting.progress`).

        ``M`` rounds of the booster, times ``n_folds + 1`` with cross-fitting (the fold
        fits and the final fit count as one run).
        """
        m = int(self._make_booster().get_params()["n_estimators"])
        kfold = self.method != "none" and self.split == "kfold"
        return m * (int(self.n_folds) + 1) if kfold else m

    def to_inference(self, feature_names: list[str] | None = None) -> InferenceModel:
        """The numpy-only inference object that artifacts store and the service serves."""
        self._check_fitted()
        names = feature_names
        if names is None and hasattr(self.estimator_, "feature_names_in_"):
            names = [str(n) for n in self.estimator_.feature_names_in_]
        scorer = BinaryScorer(
            self.estimator_.ensemble_, self.estimator_.score_kind, self.calibrator_
        )
        # A booster trained with costs exposes them (2x2, rows = truth). Calibrated
        # probabilities no longer depend on them; raw scores do (change-of-skew rule).
        costs = getattr(self.estimator_, "training_cost_matrix_", None)
        rule = "skew_change" if costs is not None and self.method == "none" else "threshold"
        return InferenceModel(
            classes=tuple(self.classes_.tolist()),
            feature_names=None if names is None else tuple(names),
            scorer=scorer,
            train_priors=np.asarray(self.class_priors_, dtype=np.float64),
            training_costs=None if costs is None else np.asarray(costs, dtype=np.float64),
            rule=rule,
        )


CalibratedAdaMEC = CalibratedBoosting
"""Calibrated AdaMEC (Nikolaou et al. 2016): :class:`CalibratedBoosting` around AdaBoost."""
