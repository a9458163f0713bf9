"""Training on a Dask cluster (``"distributed": true``): what is accepted, and the fit.

:func:`check_distributed` refuses at once (422 naming the field) what the cluster cannot
train: no cluster configured (COSTWISE_DASK_SCHEDULER), rows sent in the body instead of
a dataset reference, a reference that is not Parquet on a local path (the workers read
the same files, under COSTWISE_DATA_ROOTS, through a shared mount), a synchronous
training (it always runs as a job), and any combination but :data:`SUPPORTED`.
:func:`routed` sends a reference training that the cluster can train there on its own
from COSTWISE_DASK_TRAIN_MIN_ROWS rows on (the operator's choice; unset by default).

:func:`fit_on_dask` runs in the job: :func:`models.distributed.fit_calibrated_adaboost`
drives the cluster (the workers read and bin the files; histograms, stumps and the
out-of-fold scores travel) with the given ``n_estimators``, or for ``auto`` and an
``adaboost`` without it, the rounds chosen as :mod:`models.distributed.capacity` says
(up to COSTWISE_MAX_ROUNDS, recorded under ``fitted.capacity`` as ``auto`` records its
choice, with its ``capacity`` plot); then the version's facts are built as a single-machine
training builds them: metrics and plots from the out-of-fold calibrated probabilities
of every row, the calibration, the decision rule, and the cluster's provenance under
``params.fitted.distributed``. Two classes only: a third label is found in the first
pass over the data and fails the job (``dataset.label_column``) before any boosting. A
scheduler that cannot be reached, or a cluster that loses its workers or scheduler for
good, fails the job with ``UNAVAILABLE``; nothing is registered in either case.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from app.errors import InvalidArgument, Unavailable
from app.services.datasets import DatasetRef, OpenedDataset
from app.services.decisions.evaluation import OUT_OF_FOLD, out_of_fold_metrics
from app.services.plots.precompute import plot_rows_from
from app.services.training.fit import FittedModel, decision_facts
from app.services.training.spec import TrainingSpec
from app.settings import Settings
from models.catalog.algorithms import get_algorithm
from models.exceptions import ClusterUnavailable, InvalidInput, TrainingError

__all__ = ["SUPPORTED", "check_distributed", "cluster_rounds", "fit_on_dask", "routed"]

SUPPORTED = (
    "algorithm 'auto' (rounds of stumps chosen) or 'adaboost' with weak_learner 'stump' "
    "(n_estimators given, or chosen when left out), calibration 'platt' or 'isotonic', "
    "calibration_split 'kfold', score 'vote', no params and no evaluation_fraction (the "
    "metrics are out of fold), on two classes"
)
"""The one combination a distributed training takes (the messages say it)."""

_FIELD = "distributed"


def _refuse(field: str, why: str) -> InvalidArgument:
    return InvalidArgument(f"{field}: {why}", field=field)


def check_distributed(spec: TrainingSpec, settings: Settings, ref: Any, mode: str) -> None:
    """Refuse a ``distributed`` training the cluster cannot run (:class:`InvalidArgument`
    naming the field); nothing for a training that is not distributed.

    ``ref`` is the request's dataset reference (:class:`~app.services.datasets.DatasetRef`)
    or its rows (anything else).
    """
    if spec.distributed:
        _check_cluster_can(spec, settings, ref, mode)


def routed(
    spec: TrainingSpec, settings: Settings, ref: Any, rows: int | None, mode: str
) -> TrainingSpec:
    """``spec``, made ``distributed`` when the operator's COSTWISE_DASK_TRAIN_MIN_ROWS says
    so: a reference of at least that many rows (``rows``, known from the Parquet footers)
    that the cluster can train, not asked ``mode=sync``. Anything else is returned as it
    is (and trains on this machine)."""
    threshold = settings.dask_train_min_rows
    if spec.distributed or threshold is None or rows is None or rows < threshold:
        return spec
    try:
        _check_cluster_can(spec, settings, ref, mode)
    except InvalidArgument:
        return spec
    return replace(spec, distributed=True)


def _check_cluster_can(spec: TrainingSpec, settings: Settings, ref: Any, mode: str) -> None:
    if not settings.dask_scheduler:
        raise _refuse(
            _FIELD,
            "no Dask cluster is configured (setting COSTWISE_DASK_SCHEDULER); leave "
            "distributed out to train on this machine",
        )
    if not isinstance(ref, DatasetRef):
        raise _refuse(
            _FIELD,
            "the Dask workers read the data themselves: name a dataset (a Parquet file or "
            "directory under COSTWISE_DATA_ROOTS) instead of sending rows",
        )
    if ref.format != "parquet":
        raise _refuse(
            "dataset.format",
            f"a distributed training reads Parquet (one partition per file), got {ref.format!r}",
        )
    if urlsplit(ref.uri).scheme.lower() not in ("", "file"):
        raise _refuse(
            "dataset.uri",
            "a distributed training reads file:// paths under COSTWISE_DATA_ROOTS, which "
            "every Dask worker must also read (a shared mount)",
        )
    if mode == "sync":
        raise _refuse("mode", "a distributed training runs as a job; use mode=job or auto")
    _check_supported(spec)


def _check_supported(spec: TrainingSpec) -> None:
    def unsupported(value: Any) -> str:
        return f"{value!r} is not supported by a distributed training"

    checks: list[tuple[str, bool, str]] = [
        ("algorithm", spec.algorithm in ("adaboost", "auto"), unsupported(spec.algorithm)),
        ("weak_learner", spec.weak_learner in ("stump", None), unsupported(spec.weak_learner)),
        ("calibration", spec.calibration in ("platt", "isotonic"), unsupported(spec.calibration)),
        (
            "calibration_split",
            spec.calibration_split == "kfold",
            unsupported(spec.calibration_split),
        ),
        ("score", spec.score == "vote", unsupported(spec.score)),
        ("params", not spec.params, "must be left out (adaboost takes none)"),
        (
            "evaluation_fraction",
            spec.evaluation_fraction is None,
            "must be left out (the metrics are measured out of fold on every row)",
        ),
    ]
    for field, ok, why in checks:
        if not ok:
            raise _refuse(field, f"{why}; supported: {SUPPORTED}")


def searched(spec: TrainingSpec) -> bool:
    """Whether a distributed training of ``spec`` chooses its rounds (``auto``, or
    ``adaboost`` without ``n_estimators``)."""
    return spec.algorithm == "auto" or "n_estimators" in spec.defaulted


def cluster_rounds(spec: TrainingSpec, max_rounds: int | None) -> int:
    """The rounds a distributed training of ``spec`` reports as its ``total`` (a round
    grows every fold's booster at once): ``n_estimators``, or the cap it searches up to."""
    from models.distributed.capacity import round_cap  # numpy only

    return round_cap(max_rounds) if searched(spec) else int(spec.n_estimators or 0)


def fit_on_dask(
    opened: OpenedDataset, spec: TrainingSpec, settings: Settings
) -> tuple[FittedModel, dict[str, Any]]:
    """Train ``spec`` on the cluster over the files of ``opened`` (an
    :class:`~app.services.datasets.OpenedDataset`); the fitted model's facts and the
    version's ``data`` facts. Errors: see the module docstring."""
    from models.distributed import fit_calibrated_adaboost  # dask: an optional extra

    address = str(settings.dask_scheduler)
    features = list(opened.feature_columns)
    label = str(opened.ref.label_column)
    try:
        fit = fit_calibrated_adaboost(
            address,
            [(f, k) for f, k in zip(opened.files, opened.partition_keys(), strict=True)],
            features,
            label,
            n_estimators=None if searched(spec) else int(spec.n_estimators or 0),
            n_folds=int(spec.n_folds),
            method=spec.calibration,
            max_rounds=settings.max_rounds,
        )
    except ClusterUnavailable as exc:
        raise Unavailable(
            f"distributed training on the Dask cluster at {address} (setting "
            f"COSTWISE_DASK_SCHEDULER) failed: {exc}; nothing was registered"
        ) from None
    except TrainingError as exc:
        raise _refuse(
            "dataset.label_column",
            f"distributed training: {exc} (a distributed training takes two classes; "
            "leave distributed out for more)",
        ) from None
    except InvalidInput as exc:
        raise _refuse("dataset.columns", f"distributed training: {exc}") from None
    model, info = fit.model, fit.info
    classes = list(model.classes)
    y_index = fit.y_index
    y = np.asarray(classes)[y_index]
    proba, raw = fit.oof.positive, fit.oof.raw_positive
    metrics = out_of_fold_metrics(model, y, proba, y_index=y_index)
    capacity = info.get("capacity")  # the rounds chosen, as models.auto records them
    plots = plot_rows_from(
        model, y, proba, raw, capacity=capacity, evaluation=OUT_OF_FOLD, y_index=y_index
    )
    calibration = {
        "method": spec.calibration,
        "scheme": "cross-fitted calibration",
        "n_folds": int(spec.n_folds),
        "folds": info["folds"],
        "score": "vote",
    }
    fitted = {
        "n_estimators": int(info["rounds"][-1]),
        "termination_reason": str(info["termination_reasons"][-1]),
        "distributed": info,
    }
    if capacity is not None:
        fitted["capacity"] = capacity
    counts = np.bincount(y_index, minlength=len(classes))
    data = {
        "n_rows": int(info["n_rows"]),
        "n_features": len(features),
        "feature_names": features,
        "classes": _plain(classes),
        "class_counts": {str(c): int(k) for c, k in zip(classes, counts, strict=True)},
        "positive_class": _plain(classes)[1],
        "dataset": {
            "uri": opened.ref.uri,
            "format": opened.ref.format,
            "binned": True,
            "files": len(opened.files),
        },
    }
    algorithm = get_algorithm(spec.algorithm_name)
    facts = FittedModel(
        model, metrics, calibration, fitted, decision_facts(model, algorithm), plots
    )
    return facts, data


def _plain(values: list[Any]) -> list[Any]:
    """Labels as JSON values (numpy scalars to Python)."""
    return [v.item() if isinstance(v, np.generic) else v for v in values]
