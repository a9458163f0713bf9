"""Use cases: the stored plots of a version, cost curves over other ranges, and what-if.

Plots are computed at registration (:mod:`app.services.plots.precompute`) and stored with the
version, so serving one reads one row. A cost curve over another cost range and the
what-if are computed on request from the stored held-out sample (a few milliseconds).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from app.errors import InvalidArgument, NotFound
from app.registry.orm import ModelVersion
from app.registry.repository import Registry, reading
from app.services.common.core_errors import core_errors
from app.services.decisions.action_costs import with_review
from app.services.decisions.request_costs import binary_costs
from app.services.plots.charts import TITLES, render_svg
from app.services.plots.precompute import HELDOUT
from models.evaluation.plots import (
    COST_CURVE_RATIOS,
    cost_curve,
    whatif,
    whatif_matrix,
    whatif_review,
)

PLOT_KINDS = tuple(TITLES)


@dataclass(frozen=True)
class PlotInfo:
    kind: str
    title: str


@dataclass(frozen=True)
class PlotView:
    """One plot: its JSON data and (when asked for) its SVG picture."""

    model: str
    version: int
    kind: str
    title: str
    data: dict[str, Any]
    svg: str | None


def _label(name: str, v: ModelVersion) -> str:
    return f"version {v.version} of model {name!r}"


def _why_none(name: str, v: ModelVersion) -> str:
    """Why a version has no plots (told by its recorded parameters)."""
    params = v.params or {}
    if (params.get("decision") or {}).get("rule") == "fixed":
        return (
            f"{_label(name, v)} decides only under its training costs (decision rule 'fixed') "
            "and has no probabilities, so it has no probability plots and no what-if"
        )
    if params.get("evaluation_fraction") == 0 or (v.metrics or {}).get("n_evaluation") == 0:
        return (
            f"{_label(name, v)} was trained with evaluation_fraction 0: it has no held-out rows "
            "to compute plots and what-if from; train a version with evaluation_fraction > 0"
        )
    recalibrated = params.get("recalibration") or {}
    if recalibrated.get("parent_version") is not None:
        return (
            f"{_label(name, v)} is a recalibration of version {recalibrated['parent_version']} "
            "(the same booster, a new calibration map) registered without plots or stored "
            "evaluation rows; the parent's plots show the booster, and recalibrating again "
            "stores them for the new map"
        )
    return (
        f"{_label(name, v)} was registered before plots existed (they are computed at "
        "registration, on the held-out rows); train a new version to get them"
    )


def _two_classes(name: str, v: ModelVersion, what: str) -> None:
    classes = (v.data or {}).get("classes") or []
    if len(classes) != 2:
        raise InvalidArgument(
            f"{what} is for two-class models; {_label(name, v)} has {len(classes)} classes "
            f"{classes[:10]}: use GET /v1/models/{name}/versions/{v.version}/whatif/matrix"
            f"?cost_matrix=[[...], ...] ({len(classes)} x {len(classes)}, JSON) instead",
            field="version",
        )


class Plots:
    """Reads the plots of versions; computes cost curves and what-ifs on held-out rows."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self._sessions = sessions

    def _version(self, reg: Registry, name: str, version: int) -> tuple[ModelVersion, list[str]]:
        v = reg.get_version(name, version)
        kinds = reg.plot_kinds(v)
        if not kinds:
            raise NotFound(_why_none(name, v), field="version")
        return v, kinds

    def list_plots(self, name: str, version: int) -> list[PlotInfo]:
        """The plots of a version, in :data:`PLOT_KINDS` order (NotFound says why if none)."""
        with reading(self._sessions) as reg:
            _, kinds = self._version(reg, name, version)
        return [PlotInfo(k, TITLES[k]) for k in PLOT_KINDS if k in kinds]

    def _held_out(self, reg: Registry, name: str, v: ModelVersion) -> tuple[np.ndarray, np.ndarray]:
        row = reg.find_plot(v, HELDOUT)
        if row is None:
            raise NotFound(_why_none(name, v), field="version")
        return np.asarray(row.data["y"], dtype=np.int8), np.asarray(row.data["p"], np.float64)

    def get_plot(
        self,
        name: str,
        version: int,
        kind: str,
        *,
        svg: bool = False,
        ratio_min: float | None = None,
        ratio_max: float | None = None,
    ) -> PlotView:
        """Plot ``kind`` of a version; a cost curve over ``ratio_min..ratio_max`` on request."""
        if kind not in PLOT_KINDS:
            raise NotFound(
                f"plot kind {kind!r} does not exist; kinds: {', '.join(PLOT_KINDS)}", field="kind"
            )
        custom = ratio_min is not None or ratio_max is not None
        if custom and kind != "cost_curve":
            field = "ratio_min" if ratio_min is not None else "ratio_max"
            raise InvalidArgument(
                f"{field}: only the cost_curve plot takes a cost range", field=field
            )
        with reading(self._sessions) as reg:
            v, kinds = self._version(reg, name, version)
            if kind not in kinds:
                listed = ", ".join(k for k in PLOT_KINDS if k in kinds)
                n_classes = len((v.data or {}).get("classes") or [])
                if kind == "capacity":
                    raise NotFound(
                        f"{_label(name, v)} has no capacity plot: it was trained with algorithm "
                        f"{v.algorithm!r} and a given capacity; the capacity plot shows the "
                        "search of algorithm 'auto' (the default); its plots: " + listed,
                        field="kind",
                    )
                raise NotFound(
                    f"{_label(name, v)} has no {kind} plot: it has {n_classes} classes, and "
                    f"{kind} needs two; its plots: {listed}",
                    field="kind",
                )
            if custom:
                y, p = self._held_out(reg, name, v)
                lo = COST_CURVE_RATIOS[0] if ratio_min is None else ratio_min
                hi = COST_CURVE_RATIOS[1] if ratio_max is None else ratio_max
                with core_errors("ratio_min", names=("ratio_min", "ratio_max")):
                    data = {**cost_curve(y, p, lo, hi), "n": len(y)}
                picture = render_svg(kind, data) if svg else None
            else:
                row = reg.find_plot(v, kind)
                if row is None:  # removed since it was listed
                    raise NotFound(_why_none(name, v), field="version")
                data, picture = dict(row.data), row.svg
        return PlotView(name, version, kind, TITLES[kind], data, picture if svg else None)

    def whatif(
        self,
        name: str,
        version: int,
        c_fp: float,
        c_fn: float,
        c_tp: float,
        c_tn: float,
        c_review: float | None = None,
    ) -> dict[str, Any]:
        """Threshold, confusion matrix and cost of one binary cost setting on held-out rows;
        with ``c_review``, also the decisions among negative, positive and review
        (``review``: the band of probabilities sent to review, counts and cost)."""
        binary = binary_costs(c_fp, c_fn, c_tp, c_tn)  # predict's rules; names the field
        if c_review is not None:  # predict's rules for costs.c_review, before any read
            with_review(binary.matrix, c_review, "c_review")
        with reading(self._sessions) as reg:
            v = reg.get_version(name, version)
            _two_classes(name, v, "what-if")
            y, p = self._held_out(reg, name, v)
            classes = list((v.data or {}).get("classes") or [])
        out = whatif(y, p, c_fp, c_fn, c_tp, c_tn)
        costs = {"c_fp": c_fp, "c_fn": c_fn, "c_tp": c_tp, "c_tn": c_tn}
        answer = {**out, "labels": classes, "costs": {k: float(v) for k, v in costs.items()}}
        if c_review is None:
            return answer
        with core_errors("c_review"):
            answer["review"] = whatif_review(y, p, c_fp, c_fn, c_review, c_tp, c_tn)
        return answer

    def whatif_matrix(
        self, name: str, version: int, cost_matrix: list[list[float]]
    ) -> dict[str, Any]:
        """Confusion matrix and cost of one ``(K, K)`` cost matrix on the evaluation rows
        (any number of classes; rows = truth, columns = decision, as predict's)."""
        with reading(self._sessions) as reg:
            v = reg.get_version(name, version)
            classes = list((v.data or {}).get("classes") or [])
            row = reg.find_plot(v, HELDOUT)
            if row is None:
                raise NotFound(_why_none(name, v), field="version")
            data = dict(row.data)
        y = np.asarray(data["y"], dtype=np.int64)
        if "proba" in data:
            proba = np.asarray(data["proba"], dtype=np.float64)
        else:  # two classes store P(classes[1]) only
            p1 = np.asarray(data["p"], dtype=np.float64)
            proba = np.column_stack([1.0 - p1, p1])
        k = proba.shape[1]
        if len(cost_matrix) != k or any(len(r) != k for r in cost_matrix):
            shape = " x ".join(sorted({str(len(r)) for r in cost_matrix}) or ["0"])
            raise InvalidArgument(
                f"cost_matrix: {_label(name, v)} has {k} classes {classes[:10]}, so the matrix "
                f"must be {k} x {k} (rows = truth, columns = decision); got {len(cost_matrix)} "
                f"rows of {shape}",
                field="cost_matrix",
            )
        with core_errors("cost_matrix"):
            out = whatif_matrix(y, proba, cost_matrix)
        matrix = [[float(c) for c in row_] for row_ in cost_matrix]
        return {**out, "labels": classes, "cost_matrix": matrix}
