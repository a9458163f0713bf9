"""JOUS-Boost: AdaBoost at a grid of quantiles (Jittering + Over/Under-Sampling).

Mease, Wyner & Buja (2007) treat AdaBoost as a *median* classifier only and obtain
class probability estimates from classifiers at other quantiles:

1. A q-classifier estimates ``{x : p(x) > q}``. It is AdaBoost fitted on data whose
   class mix is tilted so that q becomes the median: ``k_{+1} / k_{-1} = (N_{+1} /
   N_{-1}) / (q / (1 - q))`` (section 3.1, Elkan's Eq. 7 argument). Section 5.1 gives
   the sizes: under-sampling draws ``k_{+1} = (1 - q) N_{+1}`` and ``k_{-1} = q N_{-1}``
   rows without replacement (rounded); over-sampling replicates every row,
   ``k_{+1} = delta (1 - q) N_{+1}`` and ``k_{-1} = delta q N_{-1}`` (multiplicities
   ``delta - i`` and ``i`` at ``q = i / delta``). At ``q = 1/2`` the original data are
   used unchanged.
2. Replicates are *jittered* (section 3.2): every artificial copy gets iid
   ``Uniform(-nu sigma_j, +nu sigma_j)`` noise on each feature j (``sigma_j`` the
   standard deviation of feature j in the training data); one copy of every row stays
   unchanged, so the augmented data hold exactly one copy of the original data.
3. To reduce disagreement between quantiles (section 5.1) the artificial data sets are
   nested (one random permutation per class, prefixes of it are drawn) and the noise is
   recycled (the r-th jittered copy of a row has the same noise in every data set).
4. ``delta - 1`` q-classifiers at ``q = i / delta`` are combined into ``p_hat(x)``
   (section 4): starting from the median classifier, scan outward to the first
   quantile that disagrees; ``p_hat`` is the middle of the last agreeing grid cell, so it
   takes only the values ``(2k + 1) / (2 delta)``. Because the ``q = 1/2`` classifier is
   plain AdaBoost on the original data, ``p_hat(x) > 1/2`` exactly where AdaBoost
   predicts the positive class.

References
----------
.. [1] D. Mease, A. J. Wyner, A. Buja. "Boosted classification trees and class
   probability/quantile estimation." Journal of Machine Learning Research 8 (2007),
   409-439: sections 3.1, 3.2, 4 and 5.1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state

from models.boosting.adaboost import AdaBoost
from models.boosting.loop import LEARNER_PARAMS
from models.boosting.progress import fit_part
from models.exceptions import InvalidInput, NotFitted, TrainingError
from models.features.checks import binary_classes, check_fit_data, validate_predict_X
from models.inference.jous_scorer import (
    MAX_DELTA,
    JousScorer,
    check_delta,
    grid_probability,
    monotone_decisions,
)
from models.inference.model import InferenceModel
from models.specs.algorithm import AlgorithmSpec, ParamSpec
from models.specs.estimator_params import declared_init

__all__ = [
    "JOUSBoost",
    "JousScorer",
    "QuantileSample",
    "class_sizes",
    "grid_probability",
    "monotone_decisions",
    "quantile_grid",
    "quantile_sample",
    "SAMPLINGS",
    "MAX_DELTA",
]

SAMPLINGS = ("over", "under")


def quantile_grid(delta: int) -> np.ndarray:
    """The ``delta - 1`` quantiles ``q = i / delta``, i = 1..delta-1 (section 4)."""
    delta = check_delta(delta)
    return np.arange(1, delta, dtype=np.float64) / delta


def class_sizes(i: int, delta: int, n_pos: int, n_neg: int, sampling: str) -> tuple[int, int]:
    """``(k_{+1}, k_{-1})`` of the artificial data set at ``q = i / delta`` (section 5.1).

    Over-sampling: ``(delta - i) N_{+1}`` and ``i N_{-1}``. Under-sampling:
    ``(1 - q) N_{+1}`` and ``q N_{-1}`` rounded half up (at least one row per class).
    At ``q = 1/2`` both give the original counts. In every case ``k_{+1} / k_{-1}``
    equals ``(N_{+1} / N_{-1}) / (q / (1 - q))`` (section 3.1, step 1) up to rounding.
    """
    if 2 * i == delta:
        return n_pos, n_neg
    if sampling == "over":
        return (delta - i) * n_pos, i * n_neg
    k_pos = ((delta - i) * n_pos + delta // 2) // delta
    k_neg = (i * n_neg + delta // 2) // delta
    return min(max(k_pos, 1), n_pos), min(max(k_neg, 1), n_neg)


@dataclass(frozen=True)
class QuantileSample:
    """The artificial training set of one q-classifier.

    ``X``, ``y`` (1 = positive class, 0 = negative) are what AdaBoost is fitted on;
    ``source[r]`` is the original row that row r copies and ``copy[r]`` its replicate
    number (0 = the original values, r >= 1 = the r-th jittered replicate).
    """

    X: np.ndarray
    y: np.ndarray
    source: np.ndarray
    copy: np.ndarray


def _noise(seed: int, cls: int, copy: int, shape: tuple[int, int], scale: np.ndarray) -> np.ndarray:
    """Noise of the ``copy``-th replicate of class ``cls``: the same in every data set."""
    rng = np.random.default_rng([seed, cls, copy])
    return rng.uniform(-1.0, 1.0, size=shape) * scale


def quantile_sample(
    X: np.ndarray,
    y01: np.ndarray,
    i: int,
    delta: int,
    *,
    sampling: str = "over",
    nu: float = 1.0,
    feature_std: np.ndarray | None = None,
    seed: int = 0,
) -> QuantileSample:
    """Artificial data set of the q-classifier at ``q = i / delta`` (sections 3.1-3.2, 5.1).

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Training features (NaN stays NaN when jittered).
    y01 : ndarray of shape (n,)
        1 for the positive class (y = +1), 0 for the negative class.
    i, delta : int
        Grid position; ``q = i / delta``.
    sampling : {"over", "under"}
        Replicate with jitter, or draw without replacement.
    nu : float
        Jitter scale: noise ``Uniform(-nu sigma_j, nu sigma_j)`` (section 3.2).
    feature_std : ndarray of shape (d,), optional
        ``sigma_j``; default: the standard deviation of each column of ``X`` (ddof=1,
        NaN ignored; 0 for a column without two finite values).
    seed : int
        Seeds the per-class permutation and the noise. Under-sampling draws prefixes
        of one fixed permutation per class, so a data set with fewer rows of a class
        holds no row of that class that a larger one lacks (section 5.1, nesting); the
        r-th jittered replicate of a row gets the same noise at every q (section 5.1,
        noise recycling).

    Returns
    -------
    QuantileSample
    """
    delta = check_delta(delta)
    if not 1 <= i < delta:
        raise InvalidInput(f"i: expected a grid position in [1, {delta - 1}], got {i!r}")
    if sampling not in SAMPLINGS:
        raise InvalidInput(f"sampling: expected one of {list(SAMPLINGS)}, got {sampling!r}")
    pos = np.flatnonzero(y01 == 1)
    neg = np.flatnonzero(y01 == 0)
    k_pos, k_neg = class_sizes(i, delta, pos.size, neg.size, sampling)
    if 2 * i == delta:  # section 5.1: the original, unmodified data at q = 1/2
        n = y01.size
        return QuantileSample(X, y01, np.arange(n), np.zeros(n, dtype=np.intp))
    if sampling == "under":
        # Nesting (section 5.1): prefixes of one fixed permutation per class.
        # (stream [seed, cls, 0] per class; the noise uses [seed, cls, r >= 1]).
        rows = np.concatenate(
            [
                np.random.default_rng([seed, 0, 0]).permutation(neg)[:k_neg],
                np.random.default_rng([seed, 1, 0]).permutation(pos)[:k_pos],
            ]
        )
        return QuantileSample(X[rows], y01[rows], rows, np.zeros(rows.size, dtype=np.intp))
    sigma = _feature_std(X) if feature_std is None else feature_std
    scale = float(nu) * sigma
    blocks, sources, copies = [], [], []
    for cls, idx, k in ((0, neg, k_neg), (1, pos, k_pos)):
        base = X[idx]
        for r in range(k // idx.size):
            blocks.append(base if r == 0 else base + _noise(seed, cls, r, base.shape, scale))
            sources.append(idx)
            copies.append(np.full(idx.size, r, dtype=np.intp))
    src = np.concatenate(sources)
    return QuantileSample(np.concatenate(blocks), y01[src], src, np.concatenate(copies))


def _feature_std(X: np.ndarray) -> np.ndarray:
    """sigma_j of section 3.2: column standard deviations (ddof=1, NaN ignored)."""
    finite = np.sum(~np.isnan(X), axis=0)
    out = np.zeros(X.shape[1])
    ok = finite >= 2
    if ok.any():
        out[ok] = np.nanstd(X[:, ok], axis=0, ddof=1)
    return out


class JOUSBoost(ClassifierMixin, BaseEstimator):
    """JOUS-Boost: ``delta - 1`` AdaBoost q-classifiers combined into ``p_hat(x)``.

    For every ``q = i / delta`` (i = 1..delta-1) an :class:`~models.boosting.adaboost.AdaBoost`
    is fitted on the artificial data set of :func:`quantile_sample` (over-sampling with
    jitter, or under-sampling; the original data at q = 1/2); the decisions
    ``D_q(x) = [F_q(x) > 0]`` are combined by the rule of section 4
    (:func:`grid_probability`), so ``predict_proba`` takes only the values
    ``(2k + 1) / (2 delta)`` and, by construction, ``p_hat(x) > 1/2`` exactly where
    ``AdaBoost`` with the same weak-learner settings, fitted on the original data,
    predicts the positive class. The estimates are probability estimates already: they
    are served with the plain cost threshold (``rule="threshold"``), not calibrated.

    Parameters
    ----------
    delta : int, default=10
        Quantization level, even, in [2, 50]; ``delta - 1`` AdaBoost fits. The paper
        uses 10 (section 5.1): p_hat in {0.05, 0.15, ..., 0.95}.
    nu : float, default=1.0
        Jitter scale (section 3.2): noise ``Uniform(-nu sigma_j, +nu sigma_j)`` on every
        replicated copy; 1 throughout section 5. Used by ``sampling="over"`` only;
        ``nu=0`` gives plain replication (which reverts to the median classifier as the
        number of rounds grows, section 3.2).
    sampling : {"over", "under"}, default="over"
        Over-sampling with jitter, or under-sampling without replacement (section 5.1).
        The paper runs both and states no default; "under" fits on at most n rows per
        quantile (about 8x cheaper at delta=10) and is what the paper uses for
        categorical predictors.
    n_estimators, weak_learner, max_depth, max_bins :
        Passed to every :class:`~models.boosting.adaboost.AdaBoost` (rounds M per quantile; the
        paper uses 8-node rpart trees, i.e. about ``weak_learner="tree", max_depth=3``,
        and M = 800).
    random_state : int, RandomState or None, default=None
        Seeds the nested sampling, the recycled noise and the tree learners. The q = 1/2
        classifier receives ``random_state`` itself (when it is an int), so that it is
        exactly ``AdaBoost(random_state=random_state)`` fitted on the original data.

    Attributes
    ----------
    classes_, n_features_in_
        As in :class:`~models.boosting.adaboost.AdaBoost`.
    quantiles_ : ndarray of shape (delta - 1,)
        The grid ``i / delta``.
    estimators_ : list of AdaBoost
        The fitted q-classifiers, in grid order (``estimators_[delta // 2 - 1]`` is the
        median classifier).
    sample_sizes_ : ndarray of shape (delta - 1, 2)
        ``(k_{+1}, k_{-1})`` of every artificial data set.
    feature_std_ : ndarray of shape (n_features,)
        ``sigma_j`` used for the jitter.
    class_priors_ : ndarray of shape (2,)
        Class frequencies of the training data.
    scorer_ : JousScorer
        The numpy-only scorer that :meth:`to_inference` serves.
    n_estimators_ : int
        Total number of weak learners over all quantiles.
    termination_reason_ : str
        Termination reason of the median classifier (see :mod:`models.boosting.loop`);
        ``termination_reasons_`` holds those of all quantiles.
    calibration_info_ : dict
        ``{"method": "none", ...}``: no calibration map is fitted; the probabilities are
        the section-4 grid estimates (what the service records for the version).

    References
    ----------
    .. [1] D. Mease, A. J. Wyner, A. Buja. "Boosted classification trees and class
       probability/quantile estimation." JMLR 8 (2007), 409-439: section 3.1 (over/under-
       sampled q-classifier, Eq. 7), section 3.2 (jittering), section 4 (p_hat from a
       grid of q-classifiers), section 5.1 (sizes, nesting, noise recycling, delta=10,
       nu=1).

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(300, 4, random_state=0)
    >>> model = JOUSBoost(delta=4, n_estimators=10, random_state=0).fit(X, y)
    >>> set(model.predict_proba(X)[:, 1]) <= {0.125, 0.375, 0.625, 0.875}
    True
    """

    __init__ = declared_init(
        {"delta": 10, "nu": 1.0, "sampling": "over"}, LEARNER_PARAMS, random_state=None
    )

    # ---------------------------------------------------------------- checks
    def _check_params(self) -> None:
        check_delta(self.delta)
        nu = self.nu
        if isinstance(nu, bool) or not isinstance(nu, int | float | np.number):
            raise InvalidInput(f"nu: expected a finite number >= 0, got {nu!r}")
        if not (np.isfinite(nu) and nu >= 0):
            raise InvalidInput(f"nu: expected a finite number >= 0, got {nu!r}")
        if self.sampling not in SAMPLINGS:
            raise InvalidInput(
                f"sampling: expected one of {list(SAMPLINGS)}, got {self.sampling!r}"
            )

    def _validate(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
        X, y, _ = check_fit_data(self, X, y, None)
        classes, y_idx = binary_classes(self, y)
        counts = np.bincount(y_idx, minlength=2)
        self.classes_ = classes
        self.class_priors_ = counts / counts.sum()
        return X, y_idx.astype(np.int64)

    def _seeds(self) -> tuple[int, list[int]]:
        """(sampling/noise seed, one AdaBoost seed per quantile), all from random_state."""
        rs = self.random_state
        try:
            gen = check_random_state(rs)
        except ValueError as e:
            raise InvalidInput(f"random_state: {e}") from e
        base = int(rs) if isinstance(rs, int | np.integer) else int(gen.randint(2**31 - 1))
        states = np.random.SeedSequence(base).generate_state(int(self.delta)).tolist()
        return int(states[0]), [int(s) for s in states[1:]]

    # ------------------------------------------------------------------- fit
    def fit(self, X: Any, y: Any) -> JOUSBoost:
        """Fit the ``delta - 1`` q-classifiers (sections 3.1, 3.2 and 5.1); returns self.

        ``X``: numeric features, NaN allowed (missing, never jittered), infinity not.
        ``y``: exactly two labels; ``classes_[1]`` is the positive class. Sample weights
        are not supported: the paper's sampling is defined on row counts.

        Raises :class:`InvalidInput` for malformed X or y or invalid parameters, and
        :class:`TrainingError` unless there are exactly two classes, or when a
        q-classifier has no usable first learner.
        """
        self._check_params()
        X, y01 = self._validate(X, y)
        delta = int(self.delta)
        sample_seed, boost_seeds = self._seeds()
        sigma = _feature_std(X)
        rs = self.random_state
        estimators: list[AdaBoost] = []
        sizes: list[tuple[int, int]] = []
        for i in range(1, delta):
            median = 2 * i == delta
            sample = quantile_sample(
                X,
                y01,
                i,
                delta,
                sampling=self.sampling,
                nu=float(self.nu),
                feature_std=sigma,
                seed=sample_seed,
            )
            booster = AdaBoost(
                n_estimators=self.n_estimators,
                weak_learner=self.weak_learner,
                max_depth=self.max_depth,
                max_bins=self.max_bins,
                random_state=rs
                if median and isinstance(rs, int | np.integer)
                else boost_seeds[i - 1],
            )
            k_pos = int(np.count_nonzero(sample.y))
            try:
                # the delta - 1 q-classifiers count as one run of (delta - 1) M rounds
                with fit_part(i - 1, delta - 1):
                    booster.fit(sample.X, sample.y)
            except TrainingError as e:
                raise TrainingError(
                    f"JOUS q-classifier at q={i / delta:g} ({k_pos} positive, "
                    f"{sample.y.size - k_pos} negative rows): {e}"
                ) from e
            estimators.append(booster)
            sizes.append((k_pos, sample.y.size - k_pos))
        self.quantiles_ = np.arange(1, delta, dtype=np.float64) / delta
        self.estimators_ = estimators
        self.sample_sizes_ = np.asarray(sizes, dtype=np.int64)
        self.feature_std_ = sigma
        self.scorer_ = JousScorer(tuple(e.ensemble_ for e in estimators), delta)
        self.n_estimators_ = int(sum(e.n_estimators_ for e in estimators))
        self.termination_reasons_ = tuple(str(e.termination_reason_) for e in estimators)
        self.termination_reason_ = self.termination_reasons_[delta // 2 - 1]
        self.calibration_info_ = {
            "method": "none",
            "split": "none",
            "n_boost": int(y01.size),
            "n_calibration": 0,
        }
        return self

    # --------------------------------------------------------------- predict
    def _check_X(self, X: Any) -> np.ndarray:
        if not hasattr(self, "scorer_"):
            raise NotFitted(f"This {type(self).__name__} instance is not fitted yet; call fit.")
        return validate_predict_X(self, X)

    def quantile_decisions(self, X: Any, monotone: bool = True) -> np.ndarray:
        """``D_q(x)`` for every grid q, shape (n, delta - 1), non-increasing along q when
        ``monotone`` (section 4's monotonisation); raw ``F_q(x) > 0`` otherwise."""
        X = self._check_X(X)
        D = self.scorer_.quantile_decisions(X)
        return monotone_decisions(D) if monotone else D

    def predict_proba(self, X: Any) -> np.ndarray:
        """``[1 - p_hat, p_hat]`` (section 4); p_hat in {(2k + 1) / (2 delta)}."""
        X = self._check_X(X)
        return self.scorer_.proba(X)

    def predict(self, X: Any) -> np.ndarray:
        """``classes_[1]`` where p_hat >= 1/2 (the package's tie rule; p_hat is never exactly
        1/2, an odd multiple of 1 / (2 delta)), i.e. where the median AdaBoost has F > 0."""
        positive = self.predict_proba(X)[:, 1] >= 0.5
        return self.classes_[positive.astype(np.intp)]

    def progress_total(self, n_classes: int = 2) -> int:
        """The boosting-round count a fit reports as ``total``: ``(delta - 1) M``.

        The ``delta - 1`` q-classifiers count as one run (:mod:`models.boosting.progress`).
        """
        return (int(self.delta) - 1) * int(self.n_estimators)

    def to_inference(self, feature_names: list[str] | None = None) -> InferenceModel:
        """Numpy-only model for artifacts and serving: rule "threshold", no training costs.

        Request costs threshold p_hat at ``c = c_fp / (c_fp + c_fn)``: the cost-weighted
        Bayes rule of section 3 ("classify +1 iff p > c"); at a grid threshold c = i/delta
        this reproduces the monotonised q-classifier at q = c.
        """
        if not hasattr(self, "scorer_"):
            raise NotFitted(f"This {type(self).__name__} instance is not fitted yet; call fit.")
        names = feature_names
        if names is None and hasattr(self, "feature_names_in_"):
            names = [str(n) for n in self.feature_names_in_]
        if names is not None and len(names) != self.n_features_in_:
            raise InvalidInput(
                f"feature_names: expected {self.n_features_in_} names, got {len(names)}"
            )
        return InferenceModel(
            classes=tuple(self.classes_.tolist()),
            feature_names=None if names is None else tuple(str(n) for n in names),
            scorer=self.scorer_,
            train_priors=np.asarray(self.class_priors_, dtype=np.float64),
            training_costs=None,
            rule="threshold",
            metadata={
                "jous": {
                    "delta": int(self.delta),
                    "nu": float(self.nu),
                    "sampling": str(self.sampling),
                }
            },
        )

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.classifier_tags.multi_class = False
        return tags


# ---------------------------------------------------------------- catalog
def _build(common: dict[str, Any], params: dict[str, Any]) -> JOUSBoost:
    kw = {
        k: common[k]
        for k in ("n_estimators", "weak_learner", "max_depth", "max_bins", "random_state")
        if k in common
    }
    return JOUSBoost(
        delta=check_delta(params.get("delta", 10), where="params.delta"),
        nu=float(params.get("nu", 1.0)),
        sampling=str(params.get("sampling", "over")),
        **kw,
    )


SPEC = AlgorithmSpec(
    name="jous",
    title="JOUS-Boost (AdaBoost + jittering + over/under-sampling, quantized p_hat)",
    family="binary",
    source="Mease, Wyner & Buja (2007), JMLR 8, 409-439",
    equations="Mease et al. 2007: section 3.1 (q-classifier by over/under-sampling, Eq. 7), "
    "3.2 (jitter U(-nu sd_j, nu sd_j)), 4 (p_hat from delta-1 q-classifiers, "
    "monotonised from the median), 5.1 (sizes, nesting, noise recycling)",
    trains_with_costs=False,
    decision_rule="positive iff p_hat(x) >= c, c = c_fp / (c_fp + c_fn), at the request's "
    "costs (section 3: cost c = quantile q); p_hat takes the values (2k+1)/(2 delta), so "
    "a grid threshold c = i/delta reproduces the monotonised q-classifier at q = c",
    build=_build,
    params=(
        ParamSpec(
            "delta",
            "int",
            10,
            "quantization level: delta - 1 AdaBoost fits at "
            "q = i/delta; must be even (q = 1/2 on the grid)",
            minimum=2,
            maximum=MAX_DELTA,
        ),
        ParamSpec(
            "nu",
            "float",
            1.0,
            "jitter scale: Uniform(-nu sd_j, nu sd_j) noise on "
            "replicated rows (over-sampling only)",
            minimum=0,
        ),
        ParamSpec(
            "sampling",
            "str",
            "over",
            "over-sampling with jitter, or under-sampling without replacement",
            choices=SAMPLINGS,
        ),
    ),
    properties=None,
    calibrated_probabilities=True,
    notes="Table 4 of Nikolaou et al. does not cover JOUS (properties: null). Its "
    "probability estimates come from the quantile construction itself, so it is NOT "
    "wrapped in CalibratedBoosting: the service fits build(common, params) on all "
    "training rows and serves to_inference() (rule threshold); the request's "
    "calibration settings and score kind do not apply. Costs delta - 1 AdaBoost fits; "
    "over-sampled data sets hold up to delta * max class size rows each (about 41x one "
    "AdaBoost fit for balanced data at delta=10, under-sampling about 5x). The paper "
    "states no default sampling; 'over' is its jittered form (use 'under' for "
    "categorical predictors or large data).",
)
