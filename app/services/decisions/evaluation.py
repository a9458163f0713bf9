"""Metrics: held-out ones recorded with every version, and those of an evaluate request."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.errors import InvalidArgument
from app.services.decisions.request_costs import CostSetting
from models.decisions.rule import Decisions, decide
from models.evaluation.metrics import (
    brier_score,
    cost_confusion_matrix,
    cost_loss_of_decisions,
    multiclass_brier_score,
    multiclass_log_loss,
    skew,
    summarize,
    total_cost,
)
from models.inference.model import InferenceModel


def _finite(summary: dict[str, Any]) -> dict[str, Any]:
    return {k: None if v is None or not np.isfinite(v) else float(v) for k, v in summary.items()}


def class_indices(model: InferenceModel, y: np.ndarray) -> np.ndarray:
    """Index of each label in ``model.classes`` (labels come from the training data).

    Integer labels are looked up with one binary search over the sorted classes (no
    Python object per row: on 10,000,000 rows the list of them alone was 76 MiB, and
    slow); other labels through a dict. Raises KeyError for a label that is not a class.
    """
    y = np.asarray(y)
    classes = np.asarray(model.classes)
    if y.dtype.kind in "iu" and classes.dtype.kind in "iu" and len(classes):
        order = np.argsort(classes, kind="stable")
        ordered = classes[order]
        pos = np.searchsorted(ordered, y)
        np.minimum(pos, len(ordered) - 1, out=pos)
        bad = ordered[pos] != y
        if bad.any():
            raise KeyError(y[bad][0].item())
        del bad
        if not np.array_equal(order, np.arange(len(order))):
            pos = order[pos]
        return pos.astype(np.intp, copy=False)
    index = {c: i for i, c in enumerate(model.classes)}
    return np.array([index[v] for v in y.tolist()], dtype=np.intp)


HOLDOUT = "holdout"
OUT_OF_FOLD = "out_of_fold"


def _costs(model: InferenceModel) -> np.ndarray:
    """The training costs, or 0-1 costs for a model trained without them."""
    if model.training_costs is not None:
        return np.asarray(model.training_costs, dtype=np.float64)
    return 1.0 - np.eye(model.n_classes)


def evaluation_metrics(model: InferenceModel, X: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    """Metrics on held-out rows: probability quality where there are probabilities,
    accuracy and mean cost under the training costs (or 0-1 costs) always."""
    out: dict[str, Any] = {"n_evaluation": int(len(y))}
    if not len(y):
        return out
    out["evaluation"] = HOLDOUT
    y_index = class_indices(model, y)
    costs = _costs(model)
    decisions = model.decide(X, costs)
    out["accuracy"] = float((decisions.labels_index == y_index).mean())
    out["mean_cost_at_training_costs"] = float(costs[y_index, decisions.labels_index].mean())
    if model.rule == "fixed":
        return out
    out.update(_probability_metrics(model, y_index, model.predict_proba(X)))
    return out


METRIC_BLOCK_ROWS = 1_000_000
"""Rows decided at a time by :func:`out_of_fold_metrics` (the decision's work arrays are
a few times the rows' probabilities; one block on anything smaller: the same sums)."""


def out_of_fold_metrics(
    model: InferenceModel, y: np.ndarray, proba: np.ndarray, *, y_index: np.ndarray | None = None
) -> dict[str, Any]:
    """The metrics of :func:`evaluation_metrics` from out-of-fold calibrated probabilities.

    ``proba`` are the training rows' probabilities from boosters and calibration maps
    that never saw the row (:class:`models.boosting.crossfit.OutOfFold`): (n, K), or for two
    classes ``P(y = 1)`` alone, (n,); the decisions are those the model's rule takes on
    them (least expected cost at the training costs, or 0-1), made
    :data:`METRIC_BLOCK_ROWS` rows at a time. ``y_index``: ``class_indices(model, y)``
    if already computed.
    """
    out: dict[str, Any] = {"n_evaluation": int(len(y)), "evaluation": OUT_OF_FOLD}
    if y_index is None:
        y_index = class_indices(model, y)
    costs = _costs(model)
    n = len(y_index)
    correct, cost_sum = 0, 0.0
    for start in range(0, n, METRIC_BLOCK_ROWS):
        block = slice(start, start + METRIC_BLOCK_ROWS)
        p = proba[block]
        if p.ndim == 1:  # P(y = 1) of two classes: the (n, 2) rows decide
            p = np.column_stack([1.0 - p, p])
        chosen = decide(p, costs).labels_index
        correct += int(np.count_nonzero(chosen == y_index[block]))
        cost_sum += float(costs[y_index[block], chosen].sum())
        del p, chosen
    out["accuracy"] = float(correct / n) if n else float("nan")
    out["mean_cost_at_training_costs"] = float(cost_sum / n) if n else float("nan")
    out.update(_probability_metrics(model, y_index, proba))
    return out


def _probability_metrics(
    model: InferenceModel, y_index: np.ndarray, proba: np.ndarray
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if model.n_classes == 2:
        p1 = proba if proba.ndim == 1 else proba[:, 1]
        out.update(_finite(summarize((y_index == 1).astype(np.int8), p1)))
    else:
        out["brier"] = multiclass_brier_score(y_index, proba)
        out["log_loss"] = multiclass_log_loss(y_index, proba)
    return out


def labels_index(labels: Sequence[Any], classes: Sequence[Any], n_rows: int) -> np.ndarray:
    """Request labels as class indices; raises InvalidArgument naming the bad label."""
    if len(labels) != n_rows:
        raise InvalidArgument(
            f"labels: expected one label per row ({n_rows}), got {len(labels)}", field="labels"
        )
    index = {c: i for i, c in enumerate(classes)}
    y = np.empty(len(labels), dtype=np.intp)
    for i, label in enumerate(labels):
        if label not in index or type(label) is not type(classes[index[label]]):
            raise InvalidArgument(
                f"labels[{i}]: {label!r} is not a class of this model {list(classes)}",
                field=f"labels[{i}]",
            )
        y[i] = index[label]
    return y


@dataclass(frozen=True)
class RequestMetrics:
    confusion: np.ndarray
    total_cost: float
    mean_cost: float
    q: float | None
    skew: float | None
    brier: float | None
    accuracy: float | None
    actions: tuple[str, ...] | None = None


def _action_metrics(
    y: np.ndarray, proba: np.ndarray | None, decisions: Decisions, setting: CostSetting
) -> RequestMetrics:
    """Among actions: the (K, A) counts of (truth, action taken), the realised cost
    ``sum_r C_r[y_r][a_r]``; no accuracy, Q or skew (an action is not a class)."""
    c, a = setting.matrix, decisions.action_index
    assert a is not None and setting.actions is not None
    n_actions = c.shape[-1]
    confusion = np.bincount(y * n_actions + a, minlength=c.shape[-2] * n_actions)
    realised = c[y, a] if c.ndim == 2 else c[np.arange(len(y)), y, a]
    total = float(realised.sum())
    brier = None
    if proba is not None:
        k = proba.shape[1]
        brier = (
            float(brier_score((y == 1).astype(np.int8), proba[:, 1]))
            if k == 2
            else multiclass_brier_score(y, proba)
        )
    counts = confusion.reshape(c.shape[-2], n_actions)
    return RequestMetrics(counts, total, total / len(y), None, None, brier, None, setting.actions)


def request_metrics(
    y: np.ndarray, proba: np.ndarray | None, decisions: Decisions, setting: CostSetting
) -> RequestMetrics:
    """What the request's decisions cost on labelled rows, and how good the probabilities are.

    Among actions (``setting.actions``) the confusion matrix is (K, A): rows = truth,
    columns = the action taken; accuracy, Q and skew are None."""
    if setting.actions is not None:
        return _action_metrics(y, proba, decisions, setting)
    k = setting.matrix.shape[-1]
    confusion = cost_confusion_matrix(y, decisions.labels_index, k)
    total = total_cost(y, decisions.labels_index, setting.matrix)
    q = z = None
    if k == 2 and not setting.per_row and 0 < int(confusion[1].sum()) < len(y):
        c = setting.matrix
        c_fp, c_fn = c[0, 1] - c[0, 0], c[1, 0] - c[1, 1]
        z = float(skew(c_fp, c_fn, pi_pos=float(confusion[1].sum() / len(y))))
        q = cost_loss_of_decisions(confusion, z)  # Eq. 26 at the decisions made
    brier = None
    if proba is not None:
        brier = (
            float(brier_score((y == 1).astype(np.int8), proba[:, 1]))
            if k == 2
            else multiclass_brier_score(y, proba)
        )
    accuracy = float((decisions.labels_index == y).mean())
    return RequestMetrics(confusion, total, total / len(y), q, z, brier, accuracy)
