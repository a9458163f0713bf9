"""The batch door: check a batch request, submit it as a job, and run that job.

``POST /v1/models/{name}/batch`` calls :meth:`BatchService.submit`: everything that can
be checked before a row is decided is checked there and answered as a 4xx (the model and
its version or alias, the input reference and its columns, the costs and priors, the
output reference), then a job of kind ``batch`` is stored and queued; the version an alias
named is pinned in the job. The job runner calls :meth:`BatchService.run`, which checks
again (files change), decides every partition (in this process, or as Dask tasks when
``COSTWISE_DASK_SCHEDULER`` is set) into a hidden temporary directory beside the output,
and moves that directory into place only once every partition is written; any failure or
cancellation removes it. So the output is either complete or absent.
"""

from __future__ import annotations

import logging
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from anyio import to_thread

from app.errors import BatchTimeLimit, InvalidArgument
from app.services.batch import sources
from app.services.batch.checks import check_model_costs, features_of
from app.services.batch.parts import Part, PartPlan, decide_part
from app.services.batch.scoring import BatchCosts, BatchShadow, BlockSummary
from app.services.common.inputs import check_text
from app.services.datasets import DatasetReader, FetchPolicy
from app.services.prediction.intervals import check_request as check_interval
from app.services.prediction.predictor import Predictor, Resolved
from app.settings import Settings
from models.inference.model import InferenceModel

__all__ = ["BatchRequest", "BatchService", "Prepared"]

log = logging.getLogger(__name__)

#: progress(phase, rows done, rows in total) -- the jobs' progress callback (may raise
#: models.exceptions.TrainingCancelled to stop the batch)
ProgressCallback = Callable[[str, int, int], None]


@dataclass(frozen=True)
class BatchRequest:
    """What the caller asked for (JSON-able: stored in the job)."""

    input_uri: str
    output_uri: str
    input_format: str | None = None
    columns: list[str] | None = None  # the feature columns (default: the model's names)
    id_columns: list[str] = field(default_factory=list)
    costs: BatchCosts = field(default_factory=BatchCosts)
    version: int | None = None
    alias: str | None = None
    interval: bool = False  # p_low, p_high and stable columns (prediction.intervals)
    shadow: bool = False  # the model's shadow decides the rows too (extra columns)
    shadow_version: int | None = None  # pinned when the job is submitted

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["costs"] = self.costs.to_json()
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BatchRequest:
        return cls(**{**data, "costs": BatchCosts.from_json(data.get("costs") or {})})


@dataclass(frozen=True)
class Prepared:
    """A checked batch: the model, its version, the input's partitions, where to write."""

    resolved: Resolved
    model: InferenceModel
    plan: PartPlan
    parts: list[Part]
    output: Path
    shadow: BatchShadow | None = None

    @property
    def rows(self) -> int:
        """Rows of the input when its partitions say (Parquet footers), else 0."""
        return sum(p.rows or 0 for p in self.parts)


class _Jobs(Protocol):
    async def submit_batch(self, name: str, request: dict[str, Any], *, total: int) -> Any:
        """Store and enqueue a batch job; returns its view."""


class BatchService:
    """Batch decisions of a data set with a registered version (submitted as jobs)."""

    def __init__(self, predictor: Predictor, settings: Settings, jobs: _Jobs | None = None) -> None:
        self.predictor = predictor
        self.settings = settings
        self.jobs = jobs

    # ---------------------------------------------------------------- checks
    def prepare(self, name: str, request: BatchRequest) -> Prepared:
        """Check everything that can be checked before deciding; raises ServiceErrors."""
        if request.alias is not None:
            check_text(request.alias, "alias")
        resolved = self.predictor.resolve(name, request.version, request.alias)
        model = self.predictor.load(resolved)
        features = features_of(model, request.columns)
        check_model_costs(model, request.costs)
        if request.interval:
            check_interval(model)
        reader = DatasetReader.from_settings(self.settings)
        opened = sources.open_input(reader, request.input_uri, request.input_format, features)
        schema = opened.schema
        show = not opened.remote  # a fetched file's column names are never echoed
        sources.check_columns(
            schema, request.id_columns, "id_columns", numeric=False, what="an id", show=show
        )
        for cost, column in request.costs.columns.items():
            where = cost if cost.startswith("cost_matrix[") else f"costs.{cost}"
            sources.check_columns(
                schema, [column], where, numeric=True, what=f"the cost {cost}", show=show,
            )  # fmt: skip
        id_fields = [schema.field(c) for c in request.id_columns]
        plan = PartPlan(
            opened.ref.format,
            features,
            id_fields,
            request.costs,
            self.settings.batch_block_rows,
            tuple(self.settings.data_roots),
            tuple(self.settings.data_protocols),
            FetchPolicy.from_settings(self.settings),
            request.interval,
        )
        output = sources.output_path(reader, request.output_uri)
        shadow = self._shadow(name, request, resolved, model) if request.shadow else None
        return Prepared(resolved, model, plan, sources.parts_of(opened), output, shadow)

    def _shadow(
        self, name: str, request: BatchRequest, served: Resolved, model: InferenceModel
    ) -> BatchShadow:
        """The model's shadow version (pinned: ``shadow_version``), checked against the
        version the batch uses."""
        version, alias = (
            (request.shadow_version, None)
            if request.shadow_version is not None
            else self.predictor.shadow_ref(name)
        )
        if version is None and alias is None:
            raise InvalidArgument(
                f"shadow: model {name!r} has no shadow version; set one (PUT "
                f"models/{name}/shadow) or leave shadow out",
                field="shadow",
            )
        resolved = self.predictor.resolve(name, version, alias)
        if resolved.version == served.version:
            raise InvalidArgument(
                f"shadow: the shadow of model {name!r} is version {resolved.version}, the "
                "version this batch uses: nothing to compare",
                field="shadow",
            )
        return BatchShadow.of(self.predictor.load(resolved), resolved.version, model)

    # ---------------------------------------------------------------- submit
    async def submit(self, name: str, request: BatchRequest) -> Any:
        """Check ``request`` (4xx at once) and queue it as a job; returns the job's view."""
        if self.jobs is None:
            raise InvalidArgument("batch jobs are not available here", field="output")
        prepared = await to_thread.run_sync(self.prepare, name, request)
        version = prepared.resolved.version  # pinned: an alias moved meanwhile changes nothing
        shadow = prepared.shadow.version if prepared.shadow is not None else None
        pinned = BatchRequest(
            **{**vars(request), "version": version, "alias": None, "shadow_version": shadow}
        )
        job = {"batch": pinned.to_json(), "alias": request.alias}
        return await self.jobs.submit_batch(name, job, total=prepared.rows)

    # ---------------------------------------------------------------- run
    def run(
        self,
        job_id: str,
        name: str,
        request: BatchRequest,
        progress: ProgressCallback,
        within: Callable[[int, dict[str, Any], Callable[[], None]], None],
        *,
        max_seconds: float | None = None,
    ) -> dict[str, Any]:
        """Decide every row into a temporary directory, then ``within(version, result,
        move)``: the job records its success and, in the same transaction, calls ``move``
        (the output into place; raises Conflict when something is there already).

        ``max_seconds`` (a job: COSTWISE_MAX_JOB_SECONDS): a batch still deciding then is
        stopped with :class:`app.errors.BatchTimeLimit` naming that setting.
        """
        started = time.monotonic()

        def report(phase: str, done: int, total: int) -> None:
            if max_seconds is not None and time.monotonic() - started > max_seconds:
                raise BatchTimeLimit(
                    f"the batch ran longer than {max_seconds:g} s (setting "
                    f"COSTWISE_MAX_JOB_SECONDS) and was stopped after {done} rows; no "
                    "output was left"
                )
            progress(phase, done, total)

        progress("checking", 0, 0)  # the references again: files change
        prepared = self.prepare(name, request)
        tmp = sources.temporary_output(prepared.output, job_id)
        shutil.rmtree(tmp, ignore_errors=True)  # left by an earlier attempt that died
        tmp.mkdir()
        try:
            summary = self._decide(prepared, tmp, report)
            progress("writing", prepared.rows or summary.rows, prepared.rows or summary.rows)
            result = {
                **summary.to_json(prepared.model.classes),
                "output": prepared.output.as_uri(),
                "partitions": len(prepared.parts),
                "engine": "dask" if self.settings.dask_scheduler else "worker",
            }
            if prepared.shadow is not None:
                result["shadow"] = {"version": prepared.shadow.version, **result["shadow"]}
            within(
                prepared.resolved.version,
                result,
                lambda: sources.move_into_place(tmp, prepared.output),
            )
            return result
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def _decide(self, prepared: Prepared, tmp: Path, progress: ProgressCallback) -> BlockSummary:
        total_rows = prepared.rows
        if self.settings.dask_scheduler:
            from app.services.batch.on_dask import decide_on_dask  # dask is an optional extra

            return decide_on_dask(
                self.settings.dask_scheduler, prepared.model, prepared.plan, prepared.parts,
                tmp, lambda done: progress("scoring", done, total_rows), prepared.shadow,
            )  # fmt: skip
        total = BlockSummary()
        done = 0
        progress("scoring", 0, total_rows)
        for i, part in enumerate(prepared.parts):

            def report(n: int) -> None:
                nonlocal done
                done += n
                progress("scoring", done, total_rows)

            target = str(sources.part_file(tmp, i))
            total.add(
                decide_part(prepared.model, prepared.plan, part, target, report, prepared.shadow)
            )
        return total
