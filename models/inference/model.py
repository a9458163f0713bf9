"""Array-only inference object: what an artifact loads into and what the service serves.

An :class:`InferenceModel` is a :mod:`scorer <models.inference.scorers>` (features -> class
probabilities) plus what is needed to turn probabilities into least-expected-cost
decisions under *any* cost setting: the training class priors (for deployment prior
shift) and, for models trained with costs, the training cost matrix and the rule that
reconciles it with the request's costs.

Decision rules (``rule``):

``"threshold"``
    The probabilities do not depend on training costs (AdaBoost/AdaMEC, or any
    calibrated model): decide by least expected cost under the request's costs
    (Eq. 4 / Theorem 1 of Nikolaou et al.).
``"skew_change"``
    An uncalibrated model trained under cost skew ``z_tr`` (binary): its scores already
    lean towards the expensive class. Section 5.1 of Nikolaou et al. thresholds them at
    the change of skew ``z'`` with ``z_dep = z_tr z' / (z_tr z' + (1 - z_tr)(1 - z'))``.
    Equivalently (and for per-row costs too) the odds of the probabilities are first
    multiplied by ``z_tr / (1 - z_tr)``, then the request's costs decide as usual. With the
    training costs in the request this reproduces the model's own sign rule.
``"fixed"``
    A model whose decisions embody its training cost matrix and that has no
    probabilities to re-decide with (e.g. angle-based cost-sensitive boosting): it decides
    only under its training costs (or a positive multiple of them); any other cost
    setting is refused rather than silently ignored. Its scorer provides
    ``decide_fixed(X) -> class indices``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from models.decisions.rule import CostMatrix, Decisions, apply_prior_shift, decide
from models.exceptions import InvalidCostMatrix, InvalidInput, InvalidPriors
from models.inference.scorers import Scorer

Label = int | float | str | bool
RULES = ("threshold", "skew_change", "fixed")


def check_features(X: Any, n_features: int) -> np.ndarray:
    """Validate a feature matrix for prediction and return it as float64.

    Missing values (NaN, or ``None`` in a list) are allowed: every weak learner has a
    learned direction for them. Infinite values and non-numeric entries are refused.

    Raises
    ------
    InvalidInput
        Wrong number of columns, non-numeric values or infinities; the message names
        the first offending row.
    """
    try:
        arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"features must be numeric (or null for missing): {exc}") from None
    if arr.ndim == 1:
        arr = arr.reshape(1, -1)
    if arr.ndim != 2:
        raise InvalidInput(f"features must be a 2-D array of rows, got {arr.ndim} dimensions")
    if arr.shape[1] != n_features:
        raise InvalidInput(f"each row must have {n_features} features, got {arr.shape[1]}")
    if not np.isfinite(arr).all():
        bad = np.isinf(arr)
        if bad.any():
            row, col = np.argwhere(bad)[0]
            raise InvalidInput(
                f"row {int(row)}, feature {int(col)}: infinite values are not allowed "
                "(use null for a missing value)"
            )
    return arr


def training_skew(costs: np.ndarray) -> float:
    """z_tr = (c_fp - c_tn) / ((c_fp - c_tn) + (c_fn - c_tp)) of a 2x2 training cost matrix."""
    return float(CostMatrix(np.asarray(costs, dtype=np.float64)).threshold)


def remove_training_skew(proba: np.ndarray, z_tr: float) -> np.ndarray:
    """Odds of class 1 times ``z_tr / (1 - z_tr)``: the skew-change rule of section 5.1."""
    if z_tr == 0.5:
        return proba
    p1 = proba[:, 1]
    num = p1 * z_tr
    p = num / (num + (1.0 - p1) * (1.0 - z_tr))
    return np.column_stack([1.0 - p, p])


@dataclass(frozen=True)
class InferenceModel:
    """A fitted model reduced to arrays: scorer, priors and the rule for request costs.

    Parameters
    ----------
    classes : tuple
        Class labels in model order; for two classes ``classes[1]`` is the positive one.
    feature_names : tuple of str or None
        Feature names in column order, when known.
    scorer : Scorer
        Features -> class probabilities.
    train_priors : ndarray of shape (K,)
        Class frequencies in the training data, for deployment prior shift.
    training_costs : ndarray of shape (K, K) or None
        Cost matrix the model was trained with (None: trained without costs).
    rule : {"threshold", "skew_change"}
        How request costs are applied (see the module docstring).
    metadata : dict
        JSON-able facts about the model (algorithm, parameters, ...).
    """

    classes: tuple[Label, ...]
    feature_names: tuple[str, ...] | None
    scorer: Scorer
    train_priors: np.ndarray
    training_costs: np.ndarray | None = None
    rule: str = "threshold"
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.rule not in RULES:
            raise InvalidInput(f"rule must be one of {RULES}, got {self.rule!r}")
        if self.rule == "skew_change" and (self.training_costs is None or len(self.classes) != 2):
            raise InvalidInput("the skew_change rule needs a 2x2 training cost matrix")
        if self.rule == "fixed" and (
            self.training_costs is None or not hasattr(self.scorer, "decide_fixed")
        ):
            raise InvalidInput(
                "the fixed rule needs training costs and a scorer with decide_fixed()"
            )

    @property
    def n_features(self) -> int:
        return int(self.scorer.n_features)

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    @property
    def training_skew(self) -> float | None:
        """z_tr of a binary model trained with costs, else None."""
        if self.training_costs is None or self.n_classes != 2:
            return None
        return training_skew(self.training_costs)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities, shape (n, K), columns in ``classes`` order."""
        return self.scorer.proba(check_features(X, self.n_features))

    def decision_proba(self, X: Any, priors: Any = None) -> np.ndarray:
        """The probabilities the decision uses: training skew removed (``skew_change``
        rule), then shifted to deployment class ``priors`` when given."""
        return self.adjusted(self.predict_proba(X), priors)

    def scored_proba(
        self, X: Any, priors: Any = None, *, validated: bool = False
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """:meth:`decision_proba` and the raw score its calibration map took.

        The raw score is ``(n,)`` for a binary scorer with one calibrator, ``(n, K)`` for
        per-class calibration, None for scorers without a separate calibration map (the
        probabilities are then computed as by :meth:`decision_proba`). Computing both
        costs no more than the probabilities alone. ``validated=True``: ``X`` is what
        :func:`check_features` returned for this model (not checked again).
        """
        if not validated:
            X = check_features(X, self.n_features)
        raw_score = getattr(self.scorer, "raw_score", None)
        if raw_score is None:
            return self.adjusted(self.scorer.proba(X), priors), None
        raw = raw_score(X)
        proba = self.scorer.proba_from_raw(raw)  # type: ignore[attr-defined]
        return self.adjusted(proba, priors), raw

    def adjusted(self, proba: np.ndarray, priors: Any) -> np.ndarray:
        """Calibrated probabilities ``proba`` (n, K) as the decision uses them: training
        skew removed (``skew_change`` rule), then shifted to deployment ``priors``."""
        z_tr = self.training_skew
        if self.rule == "skew_change" and z_tr is not None:
            proba = remove_training_skew(proba, z_tr)
        if priors is None:
            return proba
        return apply_prior_shift(proba, self.train_priors, np.asarray(priors, dtype=np.float64))

    def accepts_costs(self, costs: CostMatrix | np.ndarray | None) -> bool:
        """Whether ``costs`` can be honoured: always, except by ``fixed`` models, which
        honour only their training costs (up to a positive factor) or no costs at all."""
        if self.rule != "fixed" or costs is None:
            return True
        c = costs.matrix if isinstance(costs, CostMatrix) else np.asarray(costs, float)
        t = np.asarray(self.training_costs, dtype=np.float64)
        if c.shape != t.shape or not t.any():
            return False
        scale = float(c.sum() / t.sum())
        return scale > 0 and bool(np.allclose(c, scale * t, rtol=1e-9, atol=1e-12))

    def decide(
        self,
        X: Any,
        costs: CostMatrix | np.ndarray | None,
        priors: Any = None,
        *,
        validated: bool = False,
    ) -> Decisions:
        """Least-expected-cost decisions for ``costs`` (one matrix or one per row).

        ``fixed`` models decide with their own rule and refuse other costs and priors
        (:class:`InvalidCostMatrix`, :class:`InvalidPriors`); their expected costs are NaN.
        """
        if self.rule == "fixed":
            if not self.accepts_costs(costs):
                raise InvalidCostMatrix(
                    "this model was trained for the cost matrix "
                    f"{np.asarray(self.training_costs).tolist()} and decides only under it "
                    "(or a positive multiple); train a model with calibrated probabilities "
                    "(e.g. calibration platt) for per-request costs"
                )
            if priors is not None:
                raise InvalidPriors(
                    "this model decides only under its training conditions; "
                    "deployment priors cannot be applied"
                )
            labels = self.scorer.decide_fixed(check_features(X, self.n_features))  # type: ignore[attr-defined]
            n = labels.shape[0]
            return Decisions(np.asarray(labels, dtype=np.int64), np.full(n, np.nan), None)
        if costs is None:
            costs = 1.0 - np.eye(self.n_classes)
        return decide(self.decision_proba(X, priors), costs, validated=validated)
