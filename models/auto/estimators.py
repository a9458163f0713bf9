"""The binary and the multiclass ``auto`` estimators: one base, two families.

:class:`AutoCapacity` is everything the two share -- the parameters (one vocabulary,
:mod:`models.auto.params`), their checks, the progress count and the fit, which runs the
search (:mod:`models.auto.search`), the final stage (:mod:`models.auto.final`) and the
record (:mod:`models.auto.record`). Each family supplies only what differs: its booster
(AdaBoost or SAMME), its staged scores, its calibration map and how the fitted parts are
installed so that it serves like :class:`~models.boosting.calibrated.CalibratedBoosting` or
:class:`~models.multiclass.calibrated.CalibratedMulticlass`.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.special import expit

from models.auto.curve import loss
from models.auto.final import final_fit
from models.auto.grid import DEFAULT_GRID, MULTICLASS_GRID, checked_grid, progress_units
from models.auto.params import (
    ALIASES,
    CALIBRATION_CHOICES,
    SEARCH_METHODS,
    canonical_params,
    check_aliases,
    check_search_params,
    check_serving_params,
)
from models.auto.record import capacity_record
from models.auto.search import search
from models.boosting.adaboost import AdaBoost
from models.boosting.calibrated import CalibratedBoosting
from models.boosting.crossfit import OutOfFold, cross_calibrated, labelled_rows
from models.boosting.progress import time_left
from models.calibration import spread
from models.calibration.calibrators import make_calibrator
from models.calibration.multinomial import MultinomialCalibrator, one_blas_thread
from models.decisions.rule import class_priors
from models.features.binning import is_codes
from models.inference.fold_ensemble import FoldBoosters, FoldVoteBoosters
from models.inference.model import InferenceModel
from models.inference.multiclass_scorers import normalise_rows
from models.multiclass.calibrated import CalibratedMulticlass
from models.multiclass.samme import SAMME
from models.specs.estimator_params import declared_init

__all__ = [
    "MULTINOMIAL_L2",
    "SEARCH_PARAMS",
    "SPREAD_ROWS",
    "AutoCalibratedBoosting",
    "AutoCalibratedMulticlass",
    "AutoCapacity",
    "vocabulary_init",
]

SPREAD_ROWS = 20000
"""Training rows the spread of a fold ensemble's mean score is measured on (at most)."""
MULTINOMIAL_L2 = 0.1
"""Ridge of the multinomial map's K x K weights (bench/quality/multiclass_calibration.py)."""


#: The search settings every automatic estimator takes after ``grid`` and
#: ``calibration``, with their defaults, in order (:func:`vocabulary_init`).
SEARCH_PARAMS: dict[str, Any] = {
    "n_folds": 5,
    "metric": "log_loss",
    "max_search_rows": 20000,
    "max_rounds": None,
    "time_budget": None,
    "score_kind": "vote",
    "random_state": None,
    "n_jobs": None,
}


def vocabulary_init(*runs: dict[str, Any], **params: Any) -> Callable[..., None]:
    """:func:`~models.specs.estimator_params.declared_init` that also takes ``**aliases``.

    The declared parameters are stored as given; the other keywords are the former names
    of :data:`~models.auto.params.ALIASES`, handed to :meth:`Vocabulary._take_aliases`.
    """
    init = declared_init(*runs, **params)
    declared = inspect.signature(init)

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        aliases = {k: kwargs.pop(k) for k in list(kwargs) if k not in declared.parameters}
        init(self, *args, **kwargs)
        self._take_aliases(aliases)

    catch_all = inspect.Parameter("aliases", inspect.Parameter.VAR_KEYWORD)
    __init__.__signature__ = declared.replace(  # type: ignore[attr-defined]
        parameters=[*declared.parameters.values(), catch_all]
    )
    return __init__


class Vocabulary:
    """Parameters under one vocabulary: the former spellings of
    :data:`~models.auto.params.ALIASES` accepted by the constructor and ``set_params``
    and readable as attributes; ``get_params`` reports the names only."""

    calibration: str

    def _take_aliases(self, aliases: dict[str, Any]) -> None:
        """The constructor's extra keywords: former names, stored under their names (a
        name left at its default yields to its former name; two values: TypeError)."""
        if not aliases:
            return
        owner = type(self).__name__
        check_aliases(owner, aliases)
        signature = inspect.signature(type(self).__init__).parameters
        given = {new: getattr(self, new) for new in ALIASES.values()}
        defaults = {new: signature[new].default for new in ALIASES.values()}
        for name, value in canonical_params(owner, {**given, **aliases}, defaults).items():
            setattr(self, name, value)

    def set_params(self, **params: Any) -> Any:
        """As scikit-learn's, the former names (``method``) accepted for their names."""
        return super().set_params(**canonical_params(type(self).__name__, params))  # type: ignore[misc]

    @property
    def method(self) -> str:
        """The calibration map under its former name (``calibration``)."""
        return self.calibration

    @method.setter
    def method(self, value: str) -> None:
        self.calibration = value


class AutoCapacity(Vocabulary):
    """The capacity search shared by the binary and the multiclass estimator."""

    grid: Any
    calibration: str
    n_folds: int
    max_search_rows: int
    max_rounds: int | None
    metric: str
    time_budget: float | None
    random_state: int | None
    n_jobs: int | None
    score_kind: str
    serve: str
    classes_: np.ndarray
    oof_: OutOfFold | None
    _chosen_method: str | None = None  # calibration="auto": the map chosen, once chosen
    calibration_choice_: dict[str, Any] | None = None  # and the losses that chose it
    score_spread_: dict[str, float] | None = None  # a fold ensemble's (models.calibration.spread)
    search_methods: tuple[str, ...] = SEARCH_METHODS
    two_classes: bool = True
    booster_class: type  # the family's booster, AdaBoost or SAMME

    # the parameters of the calibrated wrapper that automatic capacity fixes (both
    # spellings of the split: CalibratedBoosting reads split, CalibratedMulticlass
    # calibration_split)
    estimator: Any = None
    split = "kfold"
    calibration_split = "kfold"
    calibration_fraction = 1.0 / 3.0

    def _booster(self, weak_learner: str, depth: int, rounds: int) -> Any:
        """An unfitted booster of the family for one grid entry."""
        return self.booster_class(
            n_estimators=rounds,
            weak_learner=weak_learner,
            max_depth=depth,
            score_kind=self.score_kind,
            random_state=self.random_state,
        )

    # ---- what differs between the families (implemented by the subclasses)

    def _staged(self, model: Any, X: Any, cps: np.ndarray) -> np.ndarray:
        """Scores after each checkpoint's rounds: (len(cps), n) or (len(cps), n, K)."""
        raise NotImplementedError

    def _calibrate(
        self, scores: np.ndarray, y_index: np.ndarray, w: np.ndarray | None, start: Any = None
    ) -> Any:
        """The family's map fitted on ``scores``; ``start``, a map fitted on nearby scores
        (the previous checkpoint's), may seed an iterative fit (the same optimum, fewer
        steps); a family whose maps have no such fit ignores it."""
        raise NotImplementedError

    def _probabilities(self, calibrated: Any, scores: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _install(self, booster: Any, calibrated: Any, info: dict[str, Any]) -> None:
        raise NotImplementedError

    def _raw(self, scores: np.ndarray) -> np.ndarray:
        """Raw scores as probabilities (before calibration), (n, K)."""
        raise NotImplementedError

    def _serves_folds(self) -> bool:
        """Whether small data is served by the fold boosters (no refit on all rows)."""
        return False

    def _fold_booster(self, models: list[Any], rounds: int) -> Any:
        raise NotImplementedError

    def _spread(self, calibrated: Any, booster: Any, X: Any, scores: np.ndarray, folds: Any) -> Any:
        """The map served with fold ``booster`` (None: one refitted booster)."""
        return calibrated

    # ---- shared
    @property
    def _map_method(self) -> str:
        """The map fitted: ``calibration``, or while ``"auto"`` has not chosen, Platt's."""
        chosen = getattr(self, "_chosen_method", None)
        if self.calibration != "auto":
            return str(self.calibration)
        return "platt" if chosen is None else str(chosen)

    def _final_map(
        self,
        scores: np.ndarray,
        y_index: np.ndarray,
        sw: np.ndarray | None,
        folds: Any,
        booster: Any,
        X: Any,
    ) -> Any:
        """The served map: ``calibration="auto"`` first chooses the map of least
        out-of-fold log loss (each fold's probabilities from a map fitted without it,
        :func:`~models.boosting.crossfit.cross_calibrated`); a fold ensemble's map is then
        spread for the mean of the fold scores (:meth:`_spread`). On one BLAS thread, as
        the search's maps (:func:`~models.calibration.multinomial.one_blas_thread`)."""
        with one_blas_thread():
            return self._final_map_fit(scores, y_index, sw, folds, booster, X)

    def _final_map_fit(
        self,
        scores: np.ndarray,
        y_index: np.ndarray,
        sw: np.ndarray | None,
        folds: Any,
        booster: Any,
        X: Any,
    ) -> Any:
        self.calibration_choice_ = None
        if self.calibration == "auto":
            losses = {}
            for method in CALIBRATION_CHOICES:
                self._chosen_method = method
                p = cross_calibrated(
                    self._calibrate, self._probabilities, scores, y_index, sw, folds
                )
                losses[method] = round(loss("log_loss", p, y_index, sw), 6)
            self._chosen_method = min(CALIBRATION_CHOICES, key=lambda m: losses[m])
            self.calibration_choice_ = {
                "chosen": self._chosen_method,
                "by": "out-of-fold log loss",
                "oof_log_loss": losses,
            }
        calibrated = self._calibrate(scores, y_index, sw)
        if booster is None:
            return calibrated
        return self._spread(calibrated, booster, X, scores, folds)

    def provides_out_of_fold(self) -> bool:
        """Always: the search cross-fits (``oof_``, :class:`models.boosting.crossfit.OutOfFold`)."""
        return True

    def _out_of_fold(
        self, scores: np.ndarray, y_index: np.ndarray, sw: np.ndarray | None, folds: Any
    ) -> OutOfFold:
        """The out-of-fold calibrated probabilities of every training row."""
        return OutOfFold(
            cross_calibrated(self._calibrate, self._probabilities, scores, y_index, sw, folds),
            self._raw(scores),
            np.arange(len(y_index)),
            {"scheme": "cross-fitted calibration", "n_folds": len(folds)},
        )

    def _grid(self) -> list[tuple[str, int, int]]:
        return checked_grid(self.grid, self.max_rounds)

    def _check_auto_params(self) -> None:
        check_search_params(
            self.metric,
            str(self.calibration),
            self.search_methods,
            self.n_folds,
            self.max_search_rows,
        )
        self._grid()
        check_serving_params(self.score_kind, self.serve)

    def progress_total(self, n_classes: int = 2) -> int:
        """The count a fit reports as ``total`` (:mod:`models.boosting.progress`), fixed in advance.

        Each grid entry's fold fits count ``n_folds x rounds``; the final stage
        ``(n_folds + 1) x`` the largest round cap. Entries the search skips are counted
        as done at once, so the total is the same whatever the data.
        """
        search_units, final_units = progress_units(self._grid(), int(self.n_folds))
        return sum(search_units) + final_units

    def _budget(self) -> float | None:
        left = time_left()
        if self.time_budget is not None:
            left = float(self.time_budget) if left is None else min(left, float(self.time_budget))
        return left

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> Any:
        """Search the capacity and fit the calibrated booster (:mod:`models.auto`).

        Raises
        ------
        InvalidInput
            Invalid settings or malformed data.
        TrainingError
            Two-class estimator: not exactly two classes; either: a class with fewer
            rows than folds.
        """
        self._check_auto_params()
        self._chosen_method = None  # the search fits Platt's under "auto"
        X, y, classes, y_index, counts = labelled_rows(X, y, two_classes=self.two_classes)
        self.classes_ = classes
        self.class_priors_ = class_priors(y_index, len(classes), sample_weight)
        sw = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        started = time.monotonic()
        grid = self._grid()
        result = search(self, grid, X, y, y_index, sw, started, self._budget())
        self.score_spread_ = None
        final = final_fit(self, X, y, y_index, sw, result)
        self.oof_ = self._out_of_fold(final.oof_scores, y_index, sw, final.oof_folds)
        self.capacity_ = capacity_record(self, result, started)
        info = {**final.info, "capacity": "auto"}
        if self.calibration_choice_ is not None:
            info["choice"] = self.calibration_choice_
            self.capacity_["calibration"] = self.calibration_choice_
        if self.score_spread_ is not None:
            info["score_spread"] = self.score_spread_
            self.capacity_["score_spread"] = self.score_spread_
        self._install(final.booster, final.calibrated, info)
        return self


class AutoCalibratedBoosting(AutoCapacity, CalibratedBoosting):
    """Calibrated AdaMEC (binary) with the weak learner and rounds chosen from the data.

    See :mod:`models.auto` for the search. Serves like
    :class:`~models.boosting.calibrated.CalibratedBoosting` (which it extends).

    Parameters
    ----------
    grid : sequence of (weak_learner, max_depth, max_rounds)
        Candidates by increasing capacity; default :data:`~models.auto.DEFAULT_GRID`.
    calibration : {"platt", "isotonic", "beta", "venn_abers", "auto"}, default="platt"
        Calibration map (also the one the search's losses are computed with). ``"auto"``:
        the search runs with Platt's, the final map is the one of least out-of-fold log
        loss among :data:`~models.auto.params.CALIBRATION_CHOICES` (recorded in
        ``capacity_["calibration"]``). Its former name ``method`` is accepted too.
    n_folds : int, default=5
        Cross-fitting folds of the search (and of the calibration for small data).
    metric : {"log_loss", "brier"}, default="log_loss"
        Out-of-fold loss of the calibrated probabilities that chooses.
    max_search_rows : int, default=20000
        Above this many rows the search runs on a stratified subsample of this size.
    max_rounds : int or None, default=None
        Caps the rounds of every grid entry (None: the grid's own caps).
    time_budget : float or None
        Seconds the search may plan for (None: only the progress deadline, if any).
    score_kind : {"vote", "logistic"}, default="vote"
        Raw score that is calibrated (Eq. 24 or 25 of Nikolaou et al.).
    random_state : int or None, default=None
        Seeds the folds, the subsample and the tree learners.
    n_jobs : int or None
        Threads for the concurrent fits (None: every CPU).
    serve : {"folds", "refit"}, default="folds"
        Serve the fold boosters as a fold ensemble (no refit: small data, the search's;
        large data, the final cross-fitting's), or refit one booster on all rows
        (:data:`~models.auto.params.SERVE`).

    Attributes
    ----------
    capacity_ : dict
        ``weak_learner``, ``max_depth``, ``n_estimators`` chosen, ``metric``,
        ``validation_loss``, ``stopped`` (``"grid_done"``, ``"no_improvement"`` or
        ``"time_limit"``) and ``curves`` (per grid entry tried: the loss at each
        checkpoint round count).
    oof_ : models.boosting.crossfit.OutOfFold
        Out-of-fold calibrated probabilities of the training rows: the winning
        checkpoint's out-of-fold scores, each fold calibrated by a map fitted on the
        other folds (:func:`models.boosting.crossfit.cross_calibrated`).

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(600, 6, random_state=0)
    >>> model = AutoCalibratedBoosting(grid=[("stump", 1, 50)], random_state=0).fit(X, y)
    >>> model.capacity_["weak_learner"], 1 <= model.capacity_["n_estimators"] <= 50
    ('stump', True)
    """

    booster_class = AdaBoost

    __init__ = vocabulary_init(
        {"grid": DEFAULT_GRID, "calibration": "platt"}, SEARCH_PARAMS, serve="folds"
    )

    def _serves_folds(self) -> bool:
        return self.serve == "folds"

    def _fold_booster(self, models: list[Any], rounds: int) -> FoldBoosters:
        return FoldBoosters.from_boosters(models, rounds)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Calibrated class probabilities, shape (n, 2), columns in ``classes_`` order."""
        if isinstance(getattr(self, "estimator_", None), FoldBoosters):
            model = self.to_inference()
            if is_codes(X):  # pre-binned codes stay uint8: the ensembles read 255 as missing
                return model.scorer.proba(np.asarray(X))
            return model.predict_proba(X)
        return CalibratedBoosting.predict_proba(self, X)

    def to_inference(self, feature_names: list[str] | None = None) -> InferenceModel:
        """The numpy-only inference object; a fold ensemble's scorer is
        :class:`~models.inference.fold_ensemble.FoldEnsembleScorer`."""
        self._check_fitted()
        folds = self.estimator_
        if not isinstance(folds, FoldBoosters):
            return CalibratedBoosting.to_inference(self, feature_names)
        return InferenceModel(
            classes=tuple(self.classes_.tolist()),
            feature_names=None if feature_names is None else tuple(feature_names),
            scorer=folds.scorer(self.calibrator_),
            train_priors=np.asarray(self.class_priors_, dtype=np.float64),
            metadata={"served": "fold_ensemble", "n_folds": len(folds.ensembles)},
        )

    def _staged(self, model: Any, X: Any, cps: np.ndarray) -> np.ndarray:
        ens = model.ensemble_
        h = ens.learner_outputs(X)
        a = ens.alphas
        cols = np.minimum(cps, len(a)) - 1
        if self.score_kind == "vote":
            v = np.cumsum((h > 0) * a, axis=1)[:, cols] / np.cumsum(a)[cols]
            s = np.clip(v, 0.0, 1.0)
        else:
            s = expit(2.0 * np.cumsum(h * a, axis=1)[:, cols])
        return np.ascontiguousarray(s.T)

    def _calibrate(
        self, scores: np.ndarray, y_index: np.ndarray, w: np.ndarray | None, start: Any = None
    ) -> Any:
        return make_calibrator(self._map_method).fit(scores, y_index, sample_weight=w)

    def _spread(self, calibrated: Any, booster: Any, X: Any, scores: np.ndarray, folds: Any) -> Any:
        """The map composed with the spread of the mean fold score
        (:mod:`models.calibration.spread`), measured on at most
        :data:`SPREAD_ROWS` training rows."""
        fold_of_row = np.asarray(folds.fold_of_row)
        n = len(fold_of_row)
        rows = np.arange(n)
        if n > SPREAD_ROWS:
            rows = np.sort(np.random.default_rng(self.random_state).choice(n, SPREAD_ROWS, False))
        Xr = X[rows]
        kind = booster.score_kind
        fold_scores = np.column_stack([e.score(Xr, kind) for e in booster.ensembles])
        fitted = spread.fit(scores[rows], fold_scores, fold_of_row[rows])
        self.score_spread_ = fitted.to_state()
        return spread.spread_map(calibrated, fitted)

    def _probabilities(self, calibrated: Any, scores: np.ndarray) -> np.ndarray:
        p1 = calibrated.predict(scores)
        return np.column_stack([1.0 - p1, p1])

    def _raw(self, scores: np.ndarray) -> np.ndarray:
        return np.column_stack([1.0 - scores, scores])

    def _out_of_fold(
        self, scores: np.ndarray, y_index: np.ndarray, sw: np.ndarray | None, folds: Any
    ) -> OutOfFold:
        # one column each (OutOfFold.binary): P(y = 1), the second column _probabilities
        # would stack beside 1 - P(y = 1), and the score
        p1 = cross_calibrated(
            self._calibrate, lambda cal, s: cal.predict(s), scores, y_index, sw, folds
        )
        info = {"scheme": "cross-fitted calibration", "n_folds": len(folds)}
        return OutOfFold.binary(p1, scores, info)

    def _install(self, booster: Any, calibrated: Any, info: dict[str, Any]) -> None:
        self.estimator_ = booster
        self.calibrator_ = calibrated
        self.calibration_info_ = {"method": self._map_method, **info}

    def progress_total(self, n_classes: int = 2) -> int:
        return AutoCapacity.progress_total(self, n_classes)


class AutoCalibratedMulticlass(AutoCapacity, CalibratedMulticlass):
    """SAMME with per-class calibration and the weak learner and rounds chosen from the data.

    The multiclass counterpart of :class:`AutoCalibratedBoosting`: the same search and the
    same parameters (default grid :data:`~models.auto.MULTICLASS_GRID`); serves like
    :class:`~models.multiclass.calibrated.CalibratedMulticlass`. Raw scores are SAMME's
    vote fractions (``score_kind="vote"``) or the softmax of its votes (``"logistic"``,
    :func:`models.inference.multiclass_scorers.raw_vote_scores`). ``calibration="multinomial"``
    (the default) calibrates them with one softmax map of all K
    (:class:`~models.calibration.multinomial.MultinomialCalibrator`, ridge
    :data:`MULTINOMIAL_L2`); ``"platt"`` or ``"isotonic"`` with one map per class,
    normalised.
    """

    search_methods = (*SEARCH_METHODS, "multinomial")
    two_classes = False
    booster_class = SAMME

    __init__ = vocabulary_init(
        {"grid": MULTICLASS_GRID, "calibration": "multinomial"}, SEARCH_PARAMS, serve="folds"
    )

    def _serves_folds(self) -> bool:
        # the mean of the folds' vote fractions is one merged vote ensemble; the softmax
        # of the votes ("logistic") has no such form: those are refitted
        return self.serve == "folds" and self.score_kind == "vote"

    def _fold_booster(self, models: list[Any], rounds: int) -> FoldVoteBoosters:
        return FoldVoteBoosters.from_boosters(models, rounds)

    def _staged(self, model: Any, X: Any, cps: np.ndarray) -> np.ndarray:
        ens = model.ensemble_
        h = ens.learner_classes(np.asarray(X, dtype=np.float64))
        b = ens.betas
        cols = np.minimum(cps, len(b)) - 1
        total = np.cumsum(b)[cols]
        votes = np.empty((len(cps), h.shape[0], ens.n_classes))
        for j in range(ens.n_classes):
            votes[:, :, j] = np.cumsum((h == j) * b, axis=1)[:, cols].T
        if self.score_kind == "vote":  # vote fractions (raw_vote_scores, "vote")
            return np.clip(votes / total[:, None, None], 0.0, 1.0)
        z = np.exp(votes - votes.max(axis=2, keepdims=True))  # softmax(V), "logistic"
        return z / z.sum(axis=2, keepdims=True)

    def _calibrate(
        self, scores: np.ndarray, y_index: np.ndarray, w: np.ndarray | None, start: Any = None
    ) -> Any:
        if self.calibration == "multinomial":
            seed = start if isinstance(start, MultinomialCalibrator) else None
            return MultinomialCalibrator("full", MULTINOMIAL_L2).fit(scores, y_index, w, start=seed)
        method = self._map_method
        return [
            make_calibrator(method).fit(scores[:, j], (y_index == j).astype(np.int8), w)
            for j in range(scores.shape[1])
        ]

    def _probabilities(self, calibrated: Any, scores: np.ndarray) -> np.ndarray:
        if isinstance(calibrated, MultinomialCalibrator):
            return np.asarray(calibrated.predict_proba(scores))
        p = np.column_stack([c.predict(scores[:, j]) for j, c in enumerate(calibrated)])
        return normalise_rows(p)

    def _raw(self, scores: np.ndarray) -> np.ndarray:
        return normalise_rows(scores)

    def _install(self, booster: Any, calibrated: Any, info: dict[str, Any]) -> None:
        self.estimator_ = booster
        joint = isinstance(calibrated, MultinomialCalibrator)
        self.calibrators_ = [] if joint else list(calibrated)
        self.joint_calibrator_ = calibrated if joint else None
        self.calibration_info_ = {
            "method": self._map_method,
            **info,
            "scheme": "multinomial (softmax) calibration of the K scores"
            if joint
            else "per-class calibration, normalised",
        }
        self._done()

    def progress_total(self, n_classes: int = 3) -> int:
        return AutoCapacity.progress_total(self, n_classes)
