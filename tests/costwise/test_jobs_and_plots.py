"""Client methods for training jobs, plots and what-if, against the real service."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from costwise import AsyncClient, Client, Conflict, NotFound
from costwise.types import Job, Plot, Version, WhatIf
from tests.app.api.conftest import dataset
from tests.costwise.conftest import ADMIN_KEY, FEATURES, Service


def test_a_job_is_submitted_polled_with_progress_and_gives_its_version(client: Client) -> None:
    X, y = dataset(400)
    job = client.train("jobbed", X, y, feature_names=FEATURES, n_estimators=40, mode="job")
    # default kfold calibration: 5 fold fits + the final fit, counted as one run
    assert isinstance(job, Job) and job.status in ("queued", "running") and job.total == 40 * 6
    seen: list[Job] = []
    final = client.wait_for_job(job.id, on_progress=seen.append, poll_interval=0.05, timeout=60)
    assert final.status == "succeeded" and final.phase == "done" and final.progress == 1.0
    assert seen[-1] == final and all(0.0 <= j.progress <= 1.0 for j in seen)
    assert final.version is not None and final.error is None and final.finished_at is not None
    version = client.get_version("jobbed", final.version)
    assert isinstance(version, Version) and version.data["n_rows"] == 400
    assert client.get_job(job.id) == final
    page = client.list_jobs(model="jobbed", status="succeeded")
    assert page.total == 1 and page.jobs[0].id == job.id


def _running(client: Client, job_id: str) -> Job:
    deadline = time.monotonic() + 30
    job = client.get_job(job_id)
    while job.status == "queued" or (job.status == "running" and job.done == 0):
        assert time.monotonic() < deadline, f"job {job_id} did not start"
        time.sleep(0.02)
        job = client.get_job(job_id)
    return job


def test_running_and_queued_jobs_are_cancelled_and_register_nothing(client: Client) -> None:
    # depth-8 histogram trees on 20,000 rows x 500 rounds, 6 fits (the fixture allows 500)
    X, y = dataset(20_000, d=8)
    heavy = client.train(
        "cancelled", X, y, n_estimators=500, weak_learner="tree", max_depth=8, mode="job"
    )
    assert isinstance(heavy, Job)
    assert _running(client, heavy.id).status == "running"
    queued = client.train("cancelled", X[:100], y[:100], mode="job")  # one job at a time
    assert isinstance(queued, Job) and queued.status == "queued"
    assert client.cancel_job(queued.id).status == "cancelled"  # at once
    asked = client.cancel_job(heavy.id)
    assert asked.cancel_requested and asked.status == "running"  # stops at its next round
    final = client.wait_for_job(heavy.id, poll_interval=0.05, timeout=60)
    assert final.status == "cancelled" and final.version is None and final.done < final.total
    with pytest.raises(Conflict) as err:
        client.cancel_job(heavy.id)
    assert (err.value.status, err.value.code) == (409, "CONFLICT")
    with pytest.raises(NotFound):
        client.get_model("cancelled")  # no version was registered, so no model either


def test_an_unknown_job_is_not_found(client: Client) -> None:
    with pytest.raises(NotFound) as err:
        client.get_job("0123456789abcdef")
    assert err.value.code == "NOT_FOUND"


def test_plots_are_listed_and_read_as_json_and_svg(client: Client, fraud: dict[str, Any]) -> None:
    plots = client.list_plots("fraud", 1)
    assert all(isinstance(p, Plot) for p in plots)
    assert {p.kind for p in plots} == {"brier_curve", "reliability", "roc", "cost_curve"}
    roc = client.get_plot("fraud", 1, "roc")
    assert 0.0 <= roc["auc"] <= 1.0 and len(roc["fpr"]) == len(roc["tpr"])
    curve = client.get_plot("fraud", 1, "cost_curve", ratio_min=0.5, ratio_max=20)
    assert (curve["ratio_min"], curve["ratio_max"]) == (0.5, 20)
    svg = client.get_plot_svg("fraud", 1, "brier_curve")
    assert "<svg" in svg[:200] and svg.rstrip().endswith("</svg>")
    with pytest.raises(NotFound):
        client.get_plot("fraud", 99, "roc")


def test_whatif_replays_the_costs_on_held_out_rows(client: Client, fraud: dict[str, Any]) -> None:
    w = client.whatif("fraud", 1, c_fp=1, c_fn=5)
    assert isinstance(w, WhatIf) and w.threshold == pytest.approx(1 / 6)
    assert sum(map(sum, w.confusion_matrix)) == w.n == fraud["version"].metrics["n_evaluation"]
    assert w.costs == {"c_fp": 1, "c_fn": 5, "c_tp": 0, "c_tn": 0}
    assert w.mean_cost == pytest.approx(w.total_cost / w.n)
    assert w.review is None  # asked for with c_review only
    r = client.whatif("fraud", 1, c_fp=1, c_fn=5, c_review=0.1)
    assert r.review is not None and r.threshold == w.threshold
    # review costs 0.1 whatever the truth: a row goes to review iff reviewing is cheaper
    # than both decisions, p * 5 > 0.1 and (1 - p) * 1 > 0.1: 0.02 < p < 0.9
    assert r.review["band"] == pytest.approx([0.02, 0.9])
    assert r.review["reviewed"] == sum(row[2] for row in r.review["confusion_matrix"])


def test_the_async_client_waits_for_a_job_like_the_sync_one(
    server: Service, client: Client
) -> None:
    X, y = dataset(300)

    async def run() -> tuple[Job, list[str]]:
        phases: list[str] = []
        async with AsyncClient(server.url, api_key=ADMIN_KEY) as c:
            job = await c.train("asyncjob", X, y, n_estimators=20, mode="job")
            assert isinstance(job, Job)
            final = await c.wait_for_job(
                job.id, on_progress=lambda j: phases.append(j.phase), poll_interval=0.05
            )
        return final, phases

    final, phases = asyncio.run(run())
    assert final.status == "succeeded" and phases[-1] == "done"
    assert client.get_job(final.id) == final
    assert client.get_version("asyncjob", final.version or 0).version == final.version
