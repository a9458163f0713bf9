"""The default training through the HTTP API against LightGBM + CalibratedClassifierCV.

Goal of issue 13: the service's default training (no parameters: algorithm ``auto``)
of a CSV upload of 100,000 x 30 within 2x of LightGBM (200 rounds) wrapped in
``CalibratedClassifierCV(cv=5)``, on the same machine in the same run.

Data: synthetic, with interactions (products, a sign-gated term, a threshold AND, a
sine) plus linear terms and 3% missing values in two columns; a separate test set of
``--test-rows`` rows from the same distribution scores every model.

Runs (each timed from the start of the HTTP request to the 201 answer: CSV upload and
parsing, the 80/20 evaluation split, training, evaluation, plots and registration):

* ``costwise_default``: ``POST /v1/models/{name}/versions`` with the CSV and no
  parameters (``?mode=sync``), the app built by ``create_app`` on a SQLite registry, in
  this process through Starlette's TestClient;
* ``costwise_former_default``: the same with ``{"n_estimators": 100}`` (the default
  before ``auto``: 100 stumps, Platt, 5-fold cross-fitting);
* ``lightgbm_cccv``: ``CalibratedClassifierCV(LGBMClassifier(n_estimators=200), cv=5)``
  fitted on all the CSV's rows (fit only: the baseline gets no upload, no parsing and no
  evaluation), with LightGBM's default threads and with one thread
  (``lightgbm_cccv_1thread``); the faster of the two is the reference of ``x LightGBM``.

Held-out log loss and Brier score on the test set are reported for all three (costwise
through ``POST /predict``). Run::

    .venv/bin/python -m bench training.default_training [--rows 100000] [--features 30]

Writes ``bench/results/training/default_training[-<label>].json`` and ``.md``.

``--threads 1 2`` instead times the fit alone (``AutoCalibrated().fit`` on the rows, no
HTTP; ``--classes K`` for K classes) per phase at each thread count, each fit in its own
process on the first N CPUs, alternating with LightGBM + ``CalibratedClassifierCV(cv=5)``
(200 rounds with two classes, LightGBM's default 100 with more), ``--rounds`` times
(:mod:`bench.training.phases`)::

    .venv/bin/python -m bench training.default_training --threads 1 2 --rounds 3 \
        --rows 20000 --features 30 --classes 6 --label phases-6class
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import lightgbm
import numpy as np
from fastapi.testclient import TestClient
from scipy.special import expit
from sklearn.calibration import CalibratedClassifierCV

from app.api.main import create_app
from app.settings import Settings
from bench.record import run_header, write_result

ROOT = Path(__file__).resolve().parents[2]


def synthetic(n: int, d: int, seed: int, classes: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Rows with linear terms and interactions; label drawn from the logistic of the sum
    (``classes`` > 2: the sum plus logistic noise cut at its ``classes`` quantiles)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, max(d, 10)))[:, :d] if d >= 10 else rng.normal(size=(n, d))
    z = (
        0.8 * X[:, 0]
        - 0.6 * X[:, 1]
        + 1.2 * X[:, 2] * X[:, 3]
        + 1.0 * np.sign(X[:, 4]) * X[:, 5]
        + 1.5 * ((X[:, 6] > 0.5) & (X[:, 7] < 0))
        + 0.7 * np.sin(2.0 * X[:, 8])
        - 0.4 * X[:, 9] ** 2
    )
    if classes == 2:
        y = (rng.random(n) < expit(1.5 * z - 0.3)).astype(int)
    else:
        noisy = 1.5 * z + rng.logistic(size=n)
        y = np.digitize(noisy, np.quantile(noisy, np.arange(1, classes) / classes))
    X = np.round(X, 5)
    X[rng.random(n) < 0.03, 1] = np.nan
    X[rng.random(n) < 0.03, 5] = np.nan
    return X, y


def to_csv(X: np.ndarray, y: np.ndarray) -> bytes:
    buf = io.StringIO()
    buf.write(",".join([f"x{i}" for i in range(X.shape[1])] + ["label"]) + "\n")
    for row, label in zip(X, y, strict=True):
        buf.write(",".join("" if np.isnan(v) else repr(float(v)) for v in row))
        buf.write(f",{int(label)}\n")
    return buf.getvalue().encode()


def scores(y: np.ndarray, p1: np.ndarray) -> dict[str, float]:
    p = np.clip(p1, 1e-15, 1 - 1e-15)
    return {
        "log_loss": round(float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))), 5),
        "brier": round(float(np.mean((p1 - y) ** 2)), 5),
    }


def train_api(
    client: TestClient, name: str, csv: bytes, params: dict[str, Any] | None
) -> dict[str, Any]:
    files = {"file": ("train.csv", csv, "text/csv")}
    form = {"label_column": "label"}
    if params is not None:
        form["params"] = json.dumps(params)
    t0 = time.perf_counter()
    r = client.post(f"/v1/models/{name}/versions?mode=sync", files=files, data=form)
    seconds = time.perf_counter() - t0
    if r.status_code != 201:
        raise RuntimeError(f"{name}: {r.status_code} {r.text[:500]}")
    v = r.json()
    return {"seconds": round(seconds, 2), "version": v}


def predict_api(client: TestClient, name: str, X: np.ndarray) -> np.ndarray:
    out = []
    for i in range(0, len(X), 10_000):
        rows = [[None if np.isnan(v) else float(v) for v in r] for r in X[i : i + 10_000]]
        r = client.post(f"/v1/models/{name}/predict", json={"instances": rows})
        if r.status_code != 200:
            raise RuntimeError(r.text[:500])
        body = r.json()
        out.extend(p["probabilities"][1] for p in body["predictions"])
    return np.asarray(out)


def make_fit(spec: dict[str, Any]) -> tuple[Any, Any]:
    """(timed fit, warm-up) of one child of the ``--threads`` mode (:mod:`bench.training.phases`)."""
    X, y = synthetic(spec["rows"], spec["features"], spec["seed"], spec["classes"])
    if spec["which"] == "lightgbm":
        rounds = 200 if spec["classes"] == 2 else 100  # this bench's reference; LightGBM's default

        def lgbm(Xf: np.ndarray, yf: np.ndarray) -> dict[str, Any]:
            est = lightgbm.LGBMClassifier(n_estimators=rounds, verbose=-1, random_state=0)
            CalibratedClassifierCV(est, cv=5).fit(Xf, yf)
            return {"model": f"CalibratedClassifierCV(LGBMClassifier({rounds}), cv=5)"}

        return (lambda: lgbm(X, y)), (lambda: lgbm(X[:2000], y[:2000]))
    from models.auto import AutoCalibrated

    def ours(Xf: np.ndarray, yf: np.ndarray) -> dict[str, Any]:
        cap = AutoCalibrated(random_state=0).fit(Xf, yf).capacity_
        return {k: cap[k] for k in ("weak_learner", "max_depth", "n_estimators", "stopped")}

    return (lambda: ours(X, y)), (lambda: ours(X[:2000], y[:2000]))


def main() -> None:
    if "--child" in sys.argv:  # one timed fit of the --threads mode, in its own process
        from bench.training.phases import child_main

        child_main(json.loads(sys.argv[sys.argv.index("--child") + 1]), make_fit)
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--features", type=int, default=30)
    ap.add_argument("--test-rows", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--skip-former", action="store_true", help="skip the former default")
    ap.add_argument("--label", default="", help="suffix of the result file names")
    ap.add_argument(
        "--lightgbm-one-thread-only",
        action="store_true",
        help="time LightGBM with one thread only (its default threads spin on a busy machine)",
    )
    ap.add_argument("--classes", type=int, default=2, help="classes of the --threads mode")
    ap.add_argument(
        "--threads",
        type=int,
        nargs="+",
        help="instead of the HTTP runs: the fit alone (AutoCalibrated) per phase at these "
        "thread counts, interleaved with LightGBM + CalibratedClassifierCV(cv=5)",
    )
    ap.add_argument("--rounds", type=int, default=3, help="rounds of the --threads mode")
    args = ap.parse_args()
    if args.threads:
        threads_mode(args)
        return
    X, y = synthetic(args.rows + args.test_rows, args.features, args.seed)
    Xtr, ytr, Xte, yte = X[: args.rows], y[: args.rows], X[args.rows :], y[args.rows :]
    csv = to_csv(Xtr, ytr)
    out: dict[str, Any] = {
        **run_header(__file__),
        "cpus": len(os.sched_getaffinity(0)),
        "load_average_before": os.getloadavg(),
        "rows": args.rows,
        "features": args.features,
        "csv_bytes": len(csv),
        "positive_rate": round(float(ytr.mean()), 4),
        "runs": {},
    }
    print(f"{args.rows} x {args.features}, CSV {len(csv) / 1e6:.1f} MB", flush=True)

    # LightGBM's OpenMP threads spin at barriers: on a machine whose cores are shared
    # with other work it can be many times slower than one thread, so both are timed
    # and the faster is the reference.
    variants = (("lightgbm_cccv", None), ("lightgbm_cccv_1thread", 1))
    for name, threads in variants[1:] if args.lightgbm_one_thread_only else variants:
        t0 = time.perf_counter()
        lgbm = CalibratedClassifierCV(
            lightgbm.LGBMClassifier(
                n_estimators=200, verbose=-1, random_state=0, n_jobs=threads or -1
            ),
            cv=5,
        ).fit(Xtr, ytr)
        lgbm_s = time.perf_counter() - t0
        out["runs"][name] = {
            "seconds": round(lgbm_s, 2),
            **scores(yte, lgbm.predict_proba(Xte)[:, 1]),
        }
        print(name, out["runs"][name], flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            database_url=f"sqlite:///{tmp}/bench.db",
            auto_migrate=True,
            max_body_bytes=max(64 * 1024 * 1024, 2 * len(csv)),
        )
        with TestClient(create_app(settings)) as client:
            runs = [("costwise_default", None)]
            if not args.skip_former:
                runs.append(("costwise_former_default", {"n_estimators": 100}))
            for name, params in runs:
                res = train_api(client, name.replace("_", "-"), csv, params)
                v = res["version"]
                p1 = predict_api(client, name.replace("_", "-"), Xte)
                fitted = v["params"]["fitted"]
                cap = fitted.get("capacity") or {}
                out["runs"][name] = {
                    "seconds": res["seconds"],
                    "training_seconds": round(v["training_seconds"], 2),
                    **scores(yte, p1),
                    "algorithm": v["algorithm"],
                    "n_estimators": fitted.get("n_estimators"),
                    "capacity": {k: val for k, val in cap.items() if k != "curves"},
                    "curves": [
                        {k: c[k] for k in ("weak_learner", "max_depth", "best_rounds", "best_loss")}
                        for c in cap.get("curves", [])
                    ],
                }
                print(name, {k: val for k, val in out["runs"][name].items()}, flush=True)
    out["load_average_after"] = os.getloadavg()
    base = min(r["seconds"] for k, r in out["runs"].items() if k.startswith("lightgbm"))
    for r in out["runs"].values():
        r["time_vs_lightgbm"] = round(r["seconds"] / base, 2)
    lines = [
        f"# Default training through the API vs LightGBM + CalibratedClassifierCV ({out['date']})",
        "",
        f"{out['machine']}, {out['cpus']} CPUs, load average before "
        f"{out['load_average_before']} after {out['load_average_after']} (shared machine).",
        f"Synthetic data with interactions, {args.rows} x {args.features} training CSV "
        f"({len(csv) / 1e6:.1f} MB), {args.test_rows} test rows.",
        "",
        "| run | seconds | x LightGBM | test log loss | test Brier | chosen |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for name, r in out["runs"].items():
        cap = r.get("capacity") or {}
        chosen = (
            f"{cap['weak_learner']} depth {cap['max_depth']}, {cap['n_estimators']} rounds"
            if cap
            else r.get("algorithm", "")
        )
        lines.append(
            f"| {name} | {r['seconds']:.1f} | {r['time_vs_lightgbm']:.2f} | {r['log_loss']:.4f} "
            f"| {r['brier']:.4f} | {chosen} |"
        )
    lines += [
        "",
        "costwise seconds: the whole HTTP request (upload, parsing, training, evaluation, "
        "registration); LightGBM: the fit only.",
        "",
        f"Command: `{out['command']}`",
    ]
    write_result(__file__, out, "\n".join(lines), label=args.label)


def threads_mode(args: argparse.Namespace) -> None:
    """Per-phase times at each thread count against LightGBM (:mod:`bench.training.phases`)."""
    from bench.training.phases import drive
    from bench.training.phases import markdown as phase_table

    spec = {"workload": "default", "rows": args.rows, "features": args.features,
            "classes": args.classes, "seed": args.seed}  # fmt: skip
    report = {**run_header(__file__), **spec, "load_average_before": os.getloadavg()}
    report.update(drive("bench.training.default_training", spec, args.threads, args.rounds))
    report["load_average_after"] = os.getloadavg()
    info = report["median"][f"costwise@{args.threads[0]}"]["info"]
    title = (f"Default training (AutoCalibrated.fit), {args.rows} x {args.features}, "
             f"{args.classes} classes: chose {info}")  # fmt: skip
    lines = [
        f"# Default training per phase vs LightGBM + CalibratedClassifierCV ({report['date']})",
        "",
        f"{report['machine']}; load average before {report['load_average_before']}, after "
        f"{report['load_average_after']} (shared machine). Median of {args.rounds} rounds; "
        "each fit in its own process on the first N CPUs, costwise and LightGBM alternating.",
        "",
        *phase_table(title, report),
        f"Command: `{report['command']}`",
    ]
    write_result(__file__, report, "\n".join(lines), label=args.label)


if __name__ == "__main__":
    main()
