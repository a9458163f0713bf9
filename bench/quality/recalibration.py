"""Recalibration and estimated priors on real data under a simulated label shift.

For each two-class dataset of ``../shared/datasets`` and each seed, through the real
service (the app factory in-process, a temporary SQLite registry, the prediction log on):

1. version 1 is trained (``POST /v1/models/{name}/versions``) on a stratified half of the
   rows, with the dataset's own class balance;
2. the other half becomes deployment traffic whose positive share is moved to
   ``--deploy-share`` (label shift: rows drawn without replacement per class), split
   (stratified) into ``--labelled`` labelled rows (outcomes known; at most half of the
   traffic) and the test rows;
3. on the test rows (predicted by version 1, so they are logged) the service estimates
   the deployment priors and records them (``POST /v1/models/{name}/priors``: EM, no
   labels), and version 1 predicts again with ``"priors": "estimated"``;
4. the labelled rows recalibrate version 1 (``POST .../versions/1/recalibrate``) with
   ``platt`` and with ``isotonic``; and once more ``from_outcomes``, after the labelled
   rows were predicted with ids and their outcomes reported (it must give the same
   calibration map as the rows themselves);
5. every variant's probabilities of the test rows are scored against their labels:
   Brier score, ECE (10 equal-width bins), log loss, and the mean realised cost of the
   decisions at ``c_fp = 1, c_fn = 5``;
6. the test rows are served again by version 1 and by the Platt-recalibrated version,
   with ids, their outcomes reported, and ``GET .../monitoring`` says of each version
   whether the calibration test flags it and the realised against expected cost.

The booster arrays of each recalibrated version are checked byte-identical to version
1's. Results: ``bench/results/quality/recalibration.json`` and ``.md``.

Run::

    .venv/bin/python -m bench quality.recalibration [--datasets pima magic] [--seeds 0 1 2]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.papers.common import (
    available_datasets,
    binary_tasks,
    load_dataset,
    md_table,
    run_info,
    write_json,
    write_summary,
)
from bench.record import result_path

DEFAULT_SETS = ("pima", "german", "wdbc", "spambase", "chess", "magic")
VARIANTS = ("parent", "parent+em_priors", "recal_platt", "recal_isotonic")
C_FP, C_FN = 1.0, 5.0
TRAINING = {"algorithm": "adaboost", "n_estimators": 100, "calibration": "platt"}


def shifted_rows(
    y: np.ndarray, idx: np.ndarray, share: float, rng: np.random.Generator
) -> np.ndarray:
    """Indices (a subset of ``idx``, no repeats) whose positive share is ``share``: as many
    rows as the scarcer side allows."""
    pos, neg = idx[y[idx] == 1], idx[y[idx] == 0]
    n = int(min(len(pos) / share, len(neg) / (1.0 - share)))
    n_pos = int(round(n * share))
    chosen = np.r_[rng.choice(pos, n_pos, replace=False), rng.choice(neg, n - n_pos, replace=False)]
    return rng.permutation(chosen)


def scores(y: np.ndarray, p1: np.ndarray) -> dict[str, float]:
    """Brier, ECE, log loss and mean cost at (C_FP, C_FN) of the Bayes decisions."""
    from models.evaluation.metrics import brier_score, expected_calibration_error, log_loss

    decide = p1 >= C_FP / (C_FP + C_FN)
    cost = np.where(decide & (y == 0), C_FP, 0.0) + np.where(~decide & (y == 1), C_FN, 0.0)
    return {
        "brier": brier_score(y, p1),
        "ece": expected_calibration_error(y, p1),
        "log_loss": log_loss(y, p1),
        "mean_cost": float(cost.mean()),
    }


def _ok(r: Any, status: int = 200) -> Any:
    if r.status_code != status:
        raise RuntimeError(f"{r.request.method} {r.request.url}: {r.status_code} {r.text[:300]}")
    return r.json()


def _proba(client: Any, X: np.ndarray, **extra: Any) -> np.ndarray:
    out = []
    for start in range(0, len(X), 5000):
        body = {"instances": X[start : start + 5000].tolist(), **extra}
        pred = _ok(client.post("/v1/models/shift/predict", json=body))
        out += [p["probabilities"][1] for p in pred["predictions"]]
    return np.asarray(out)


def _booster_arrays(client: Any, version: int) -> dict[str, np.ndarray]:
    from app.registry.repository import Registry
    from app.services.model_registry.stored_models import read_stored

    with client.app.state.services.sessions() as s:
        reg = Registry(s)
        _, arrays = read_stored(reg, reg.get_version("shift", version)).load().scorer.to_parts()
    return arrays


def run_unit(
    X: np.ndarray, y: np.ndarray, seed: int, share: float, n_labelled: int, workdir: Path
) -> dict[str, Any]:
    """One (dataset, seed) through the real app; returns the scores of every variant."""
    from fastapi.testclient import TestClient

    from app.api.main import create_app
    from app.db import upgrade_to_head
    from app.settings import Settings

    rng = np.random.default_rng(seed)
    order = rng.permutation(len(y))
    half = len(y) // 2
    train, pool = order[:half], order[half:]
    deploy = shifted_rows(y, pool, share, rng)
    n_labelled = min(n_labelled, len(deploy) // 2)  # small datasets: half of the traffic
    n_lab_pos = int(round(n_labelled * share))  # stratified: the traffic's share exactly
    pos, neg = deploy[y[deploy] == 1], deploy[y[deploy] == 0]
    labelled = rng.permutation(np.r_[pos[:n_lab_pos], neg[: n_labelled - n_lab_pos]])
    test = rng.permutation(np.r_[pos[n_lab_pos:], neg[n_labelled - n_lab_pos :]])

    def rows(idx: np.ndarray) -> np.ndarray:
        return X[idx]

    url = f"sqlite:///{workdir / f'bench-{seed}-{time.monotonic_ns()}.db'}"
    upgrade_to_head(url)
    settings = Settings(
        database_url=url,
        max_predict_rows=10_000,
        max_train_rows=100_000,
        max_body_bytes=200_000_000,
        max_features=1000,
    )
    out: dict[str, Any] = {
        "n_train": int(len(train)),
        "train_share": float(y[train].mean()),
        "n_labelled": int(len(labelled)),
        "n_test": int(len(test)),
        "deploy_share": float(y[deploy].mean()),
    }
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        body = {
            "features": _json_rows(rows(train)),
            "labels": y[train].tolist(),
            "random_state": seed,
            **TRAINING,
        }
        v1 = _ok(client.post("/v1/models/shift/versions", json=body), 201)
        p_parent = _proba(client, rows(test), version=1)
        assert client.app.state.services.prediction_log.flush(30.0)
        t0 = time.perf_counter()
        est = _ok(client.post("/v1/models/shift/priors", json={"version": 1}), 201)
        out["em_seconds"] = time.perf_counter() - t0
        out["em_prior"] = est["priors"][1]
        out["em_iterations"] = est["n_iter"]
        out["train_prior"] = est["train_priors"][1]
        p_em = _proba(client, rows(test), version=1, priors="estimated")
        probas = {"parent": p_parent, "parent+em_priors": p_em}
        for method in ("platt", "isotonic"):
            t0 = time.perf_counter()
            v = _ok(
                client.post(
                    "/v1/models/shift/versions/1/recalibrate",
                    json={
                        "instances": _json_rows(rows(labelled)),
                        "labels": y[labelled].tolist(),
                        "method": method,
                        "random_state": seed,
                    },
                ),
                201,
            )
            out[f"recal_{method}_seconds"] = time.perf_counter() - t0
            out[f"recal_{method}_version"] = v["version"]
            out[f"recal_{method}_artifact_bytes"] = v["artifact_size"]
            out[f"recal_{method}_heldout"] = {
                k: {m: v["metrics"]["recalibration"][k][m] for m in ("brier", "ece", "log_loss")}
                for k in ("before", "after")
            }
            parent_arrays, arrays = (
                _booster_arrays(client, 1),
                _booster_arrays(client, v["version"]),
            )
            out[f"recal_{method}_booster_identical"] = (
                parent_arrays.keys() == arrays.keys()
                and all(np.array_equal(parent_arrays[k], arrays[k]) for k in arrays)
            )
            probas[f"recal_{method}"] = _proba(client, rows(test), version=v["version"])
        out["parent_artifact_bytes"] = v1["artifact_size"]
        # the same labelled rows, as logged predictions with reported outcomes
        ids = [f"lab{i}" for i in range(len(labelled))]
        _ok(
            client.post(
                "/v1/models/shift/predict",
                json={"instances": _json_rows(rows(labelled)), "ids": ids, "version": 1},
            )
        )
        assert client.app.state.services.prediction_log.flush(30.0)
        outcomes = [{"id": i, "label": int(t)} for i, t in zip(ids, y[labelled], strict=True)]
        for start in range(0, len(outcomes), 10_000):
            _ok(
                client.post(
                    "/v1/models/shift/outcomes", json={"outcomes": outcomes[start : start + 10_000]}
                )
            )
        v_log = _ok(
            client.post(
                "/v1/models/shift/versions/1/recalibrate",
                json={"from_outcomes": {}, "method": "platt", "random_state": seed},
            ),
            201,
        )
        p_log = _proba(client, rows(test), version=v_log["version"])
        out["from_outcomes_max_abs_diff"] = float(np.max(np.abs(p_log - probas["recal_platt"])))
        out["monitoring"] = _monitor(
            client, rows(test), y[test], recal_platt_version=out["recal_platt_version"]
        )
    y_test = y[test]
    out["scores"] = {name: scores(y_test, p) for name, p in probas.items()}
    return out


def _monitor(client: Any, X: np.ndarray, y: np.ndarray, recal_platt_version: int) -> dict[str, Any]:
    """The test rows served by version 1 and by the Platt-recalibrated version with ids,
    their outcomes reported; what ``GET .../monitoring`` says of each version."""
    from datetime import UTC, datetime

    since = datetime.now(UTC).isoformat()
    found: dict[str, Any] = {}
    for version in (1, recal_platt_version):
        ids = [f"m{version}-{i}" for i in range(len(X))]
        for start in range(0, len(X), 5000):
            body = {
                "instances": _json_rows(X[start : start + 5000]),
                "ids": ids[start : start + 5000],
                "version": version,
                "costs": {"c_fp": C_FP, "c_fn": C_FN},
            }
            _ok(client.post("/v1/models/shift/predict", json=body))
        assert client.app.state.services.prediction_log.flush(30.0)
        outcomes = [{"id": i, "label": int(t)} for i, t in zip(ids, y, strict=True)]
        for start in range(0, len(outcomes), 10_000):
            chunk = outcomes[start : start + 10_000]
            _ok(client.post("/v1/models/shift/outcomes", json={"outcomes": chunk}))
        report = _ok(
            client.get(
                "/v1/models/shift/monitoring",
                params={"version": version, "since": since, "bucket": "day"},
            )
        )
        total = report["versions"][0]["total"]
        cal = total["calibration"]
        found[str(version)] = {
            "labelled": total["labelled"],
            "ece": cal["ece"],
            "brier": cal["brier"],
            "spiegelhalter_p": (cal["spiegelhalter"] or {}).get("p_value"),
            "calibration_alarm": total["calibration_alarm"],
            "cost_ratio": total["cost_ratio"],
        }
    return found


def _json_rows(X: np.ndarray) -> list[list[float | None]]:
    return [[None if v != v else float(v) for v in row] for row in X.tolist()]


def _mean(values: list[float]) -> float:
    return float(np.mean(values))


def summarise(units: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per dataset: mean over seeds of every variant's scores, and the EM prior error."""
    by: dict[str, list[dict[str, Any]]] = {}
    for u in units:
        by.setdefault(u["dataset"], []).append(u)
    table = []
    for name, us in by.items():
        row: dict[str, Any] = {"dataset": name, "seeds": len(us)}
        for v in VARIANTS:
            for m in ("brier", "ece", "log_loss", "mean_cost"):
                row[f"{v}:{m}"] = _mean([u["scores"][v][m] for u in us])
        row["deploy_share"] = _mean([u["deploy_share"] for u in us])
        row["n_labelled"] = _mean([u["n_labelled"] for u in us])
        row["n_test"] = _mean([u["n_test"] for u in us])
        row["train_share"] = _mean([u["train_share"] for u in us])
        row["em_prior"] = _mean([u["em_prior"] for u in us])
        row["em_abs_error"] = _mean([abs(u["em_prior"] - u["deploy_share"]) for u in us])
        row["booster_identical"] = all(
            u["recal_platt_booster_identical"] and u["recal_isotonic_booster_identical"] for u in us
        )
        row["from_outcomes_max_abs_diff"] = max(u["from_outcomes_max_abs_diff"] for u in us)
        for key in ("parent", "recal"):
            mon = [
                u["monitoring"]["1" if key == "parent" else str(u["recal_platt_version"])]
                for u in us
            ]
            row[f"{key}_alarms"] = sum(bool(m["calibration_alarm"]) for m in mon)
            row[f"{key}_cost_ratio"] = _mean([m["cost_ratio"] for m in mon])
        table.append(row)
    return table


def markdown(table: list[dict[str, Any]], args: argparse.Namespace) -> str:
    def f(x: float) -> str:
        return f"{x:.4f}"

    parts = [
        f"Label shift: positives moved to {args.deploy_share:.0%} of the deployment traffic "
        f"(class `1` of each dataset is the positive class); up to {args.labelled} labelled "
        f"rows (at most half of the shifted traffic) recalibrate version 1 (70% fit, 30% "
        f"held out), the rest are the test rows. Each cell is a mean over seeds "
        f"{args.seeds}. Decisions at c_fp = {C_FP:g}, c_fn = {C_FN:g}. "
        f"Version 1: {TRAINING}.",
        "",
        "Brier score / ECE (10 equal-width bins) on the test rows, lower is better:",
        "",
        md_table(
            ["dataset", "labelled", "test", "train share", "deploy share", *VARIANTS],
            [
                [
                    r["dataset"],
                    f"{r['n_labelled']:.0f}",
                    f"{r['n_test']:.0f}",
                    f"{r['train_share']:.3f}",
                    f"{r['deploy_share']:.3f}",
                    *[f"{f(r[f'{v}:brier'])} / {f(r[f'{v}:ece'])}" for v in VARIANTS],
                ]
                for r in table
            ],
        ),
        "",
        f"Log loss and mean realised cost per row (c_fp = {C_FP:g}, c_fn = {C_FN:g}):",
        "",
        md_table(
            ["dataset", *VARIANTS],
            [
                [
                    r["dataset"],
                    *[f"{f(r[f'{v}:log_loss'])} / {f(r[f'{v}:mean_cost'])}" for v in VARIANTS],
                ]
                for r in table
            ],
        ),
        "",
        "What `GET /v1/models/{name}/monitoring` said of the test rows served by each "
        "version, their outcomes reported: calibration alarms (`calibration_alarm`) out "
        "of the seeds, and realised / expected cost:",
        "",
        md_table(
            ["dataset", "parent alarms", "recal_platt alarms", "parent realised/expected",
             "recal_platt realised/expected"],
            [
                [
                    r["dataset"],
                    f"{r['parent_alarms']} of {r['seeds']}",
                    f"{r['recal_alarms']} of {r['seeds']}",
                    f"{r['parent_cost_ratio']:.2f}",
                    f"{r['recal_cost_ratio']:.2f}",
                ]
                for r in table
            ],
        ),
        "",
        "Estimated deployment prior (EM on the unlabelled test rows) and checks:",
        "",
        md_table(
            ["dataset", "true share", "EM estimate", "abs error", "booster identical",
             "from_outcomes vs rows: max abs dp"],
            [
                [
                    r["dataset"],
                    f"{r['deploy_share']:.3f}",
                    f"{r['em_prior']:.3f}",
                    f"{r['em_abs_error']:.3f}",
                    "yes" if r["booster_identical"] else "NO",
                    f"{r['from_outcomes_max_abs_diff']:.2g}",
                ]
                for r in table
            ],
        ),
    ]  # fmt: skip
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--datasets", nargs="*", default=list(DEFAULT_SETS))
    p.add_argument("--seeds", nargs="*", type=int, default=[0, 1, 2])
    p.add_argument("--deploy-share", type=float, default=0.1)
    p.add_argument("--labelled", type=int, default=300)
    p.add_argument("--label", default="", help="names this configuration's result files")
    args = p.parse_args(argv)
    started = time.time()
    have = set(available_datasets())
    units: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.datasets:
            if name not in have:
                print(f"# {name}: not in ../shared/datasets, skipped", file=sys.stderr)
                continue
            task = binary_tasks(load_dataset(name))[0]
            for seed in args.seeds:
                t0 = time.perf_counter()
                unit = run_unit(task.X, task.y01, seed, args.deploy_share, args.labelled, Path(tmp))
                unit.update(dataset=name, seed=seed, seconds=time.perf_counter() - t0)
                units.append(unit)
                s = unit["scores"]
                print(
                    f"# {name} seed {seed}: brier {s['parent']['brier']:.4f} -> "
                    f"{s['recal_platt']['brier']:.4f} (platt), ece {s['parent']['ece']:.4f} -> "
                    f"{s['recal_platt']['ece']:.4f}; EM prior {unit['em_prior']:.3f} "
                    f"(true {unit['deploy_share']:.3f}); {unit['seconds']:.1f}s",
                    file=sys.stderr,
                )
    table = summarise(units)
    info = run_info(argv, started, module="bench.quality.recalibration")
    path = result_path(__file__, args.label)
    write_json(path, {"run": info, "summary": table, "units": units})
    write_summary(
        path.with_suffix(".md"), "Recalibration under label shift", info, markdown(table, args)
    )
    print(f"# wrote {path} and .md", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
