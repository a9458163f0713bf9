"""Plot rows of a new version, computed at registration on its evaluation rows.

The evaluation rows are either held-out rows the model never saw (``evaluation_fraction``
> 0) or, by default for models whose calibration is cross-fitted, every training row with
its out-of-fold calibrated probability (:class:`models.boosting.crossfit.OutOfFold`: scored by a
fold booster and a calibration map that both never saw the row; docs/training.md).

What is plotted are the probabilities the service decides on and returns from predict
(:meth:`models.inference.model.InferenceModel.decision_proba`: the calibrated probabilities;
for an uncalibrated model trained with costs, with its training skew removed), so that
the pictures and the what-if show what serving does. "Before calibration" is the raw
score the calibration map takes (:func:`models.evaluation.plots.uncalibrated_proba`).

Binary models get ``brier_curve``, ``reliability``, ``roc``, ``cost_curve`` (computed on
every held-out row) and ``heldout``: a stratified sample of at most
:data:`HELDOUT_ROWS` rows (labels and probabilities) from which the what-if and cost
curves over other ranges are computed on request. Multiclass models get the
reliability of the top label and one-vs-rest ROC curves (costs there are matrices, not
one ratio) and ``heldout`` with every class's probability, from which the what-if of a
cost matrix is computed. Models with the ``fixed`` rule (no probabilities to decide with) get none.
A model whose capacity was chosen automatically (:mod:`models.auto`) also gets
``capacity``: the validation curves of its search (computed on the training folds).
"""

from __future__ import annotations

import logging
from typing import Any, NamedTuple

import numpy as np

from app.services.decisions.evaluation import class_indices
from app.services.plots.charts import render_svg
from models.evaluation.plots import (
    brier_curve_plot,
    capacity_plot,
    cost_curve,
    reliability_plot,
    roc_curve,
    roc_one_vs_rest,
    stratified_sample,
    top_label,
    uncalibrated_proba,
)
from models.inference.model import InferenceModel

log = logging.getLogger(__name__)

#: Most held-out rows stored for the what-if (a stratified, seeded sample beyond that).
HELDOUT_ROWS = 10_000
HELDOUT = "heldout"


class PlotRow(NamedTuple):
    """One ``version_plots`` row: its kind, JSON data and SVG picture (None for heldout)."""

    kind: str
    data: dict[str, Any]
    svg: str | None


def _binary(y01: np.ndarray, p1: np.ndarray, raw: np.ndarray | None) -> dict[str, dict[str, Any]]:
    return {
        "brier_curve": brier_curve_plot(y01, p1),
        "reliability": reliability_plot(
            y01, p1, None if raw is None else (raw if raw.ndim == 1 else raw[:, 1])
        ),
        "roc": roc_curve(y01, p1),
        "cost_curve": cost_curve(y01, p1),
    }


def _multiclass(
    y_index: np.ndarray, proba: np.ndarray, raw: np.ndarray | None, classes: list[Any]
) -> dict[str, dict[str, Any]]:
    correct, confidence = top_label(proba, y_index)
    before = None if raw is None else top_label(raw, y_index)
    reliability = reliability_plot(
        correct,
        confidence,
        None if before is None else before[1],
        y_before=None if before is None else before[0],
    )
    return {
        "reliability": {**reliability, "top_label": True},
        "roc": roc_one_vs_rest(y_index, proba, classes),
    }


def plot_rows(
    model: InferenceModel,
    X: np.ndarray,
    y: np.ndarray,
    *,
    capacity: dict[str, Any] | None = None,
) -> list[PlotRow]:
    """The plot rows of a model on its held-out rows ``X``, ``y`` (none without rows).

    ``capacity``: the automatic capacity search's record (its plot needs no held-out rows).
    """
    if not len(y) or model.rule == "fixed":
        return plot_rows_from(model, y, None, None, capacity=capacity)
    return plot_rows_from(
        model, y, model.decision_proba(X), uncalibrated_proba(model, X), capacity=capacity
    )


def plot_rows_from(
    model: InferenceModel,
    y: np.ndarray,
    proba: np.ndarray | None,
    raw: np.ndarray | None,
    *,
    capacity: dict[str, Any] | None = None,
    evaluation: str = "holdout",
    y_index: np.ndarray | None = None,
) -> list[PlotRow]:
    """The plot rows from the probabilities predict decides on (``proba``) of rows labelled
    ``y`` and their raw scores before calibration (``raw``, None if none).

    Two classes: ``proba`` and ``raw`` may be their second columns alone, (n,).
    ``evaluation``: ``"holdout"`` (held-out rows scored by the served model) or
    ``"out_of_fold"`` (every training row, scored by fold models and calibration maps
    that never saw it: :class:`models.boosting.crossfit.OutOfFold`), recorded in the data.
    ``y_index``: ``class_indices(model, y)`` if already computed.
    """
    extra = []
    if capacity is not None:
        data = capacity_plot(capacity)
        extra.append(PlotRow("capacity", data, render_svg("capacity", data)))
    if not len(y) or model.rule == "fixed" or proba is None:
        return extra
    if y_index is None:
        y_index = class_indices(model, y)
    classes = list(model.classes)
    binary = model.n_classes == 2
    p1 = proba if proba.ndim == 1 else proba[:, 1]  # read only with two classes
    plots = _binary(y_index, p1, raw) if binary else _multiclass(y_index, proba, raw, classes)
    rows = [
        PlotRow(
            kind,
            {**data, "n": len(y), "classes": classes, "evaluation": evaluation},
            render_svg(kind, data),
        )
        for kind, data in plots.items()
    ]
    sample = stratified_sample(y_index, HELDOUT_ROWS)
    held: dict[str, Any] = {
        "classes": classes,
        "n_evaluation": len(y),
        "evaluation": evaluation,
        "y": y_index[sample].tolist(),
    }
    if binary:
        held["p"] = p1[sample].tolist()
    else:  # K classes: the probabilities of every class, for the what-if of a cost matrix
        held["proba"] = np.asarray(proba)[sample].tolist()
    rows.append(PlotRow(HELDOUT, held, None))
    rows.extend(extra)
    log.debug("plots of %d held-out rows: %s", len(y), [r.kind for r in rows])
    return rows
