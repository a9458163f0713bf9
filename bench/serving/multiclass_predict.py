"""One-row and batch decisions of the default multiclass model, against a baseline tree.

Trains the service default (``build_estimator("auto", {"random_state": 0})``: what
``POST /v1/models`` trains without parameters; SAMME with the capacity search and one
multinomial softmax map) on a stratified 75% of each data set in ``../shared/datasets``
(satimage and vehicle by default), stores it as an artifact and loads it back (read-only
arrays, as the service serves it). Then, in fresh processes that import the code of
each source tree given (``--src NAME=DIR``; the first one is the baseline), rounds
alternating between the trees so that machine noise hits them alike, it times:

* a one-row decision as the service makes it: :func:`app.services.decisions.row_decisions.decide_rows`
  on ``check_features`` of the row, under a K x K cost matrix with random off-diagonal
  costs in [1, 10] (probabilities and least-expected-cost decision), cycling over the
  held-out rows (median of ``--calls`` calls);
* one-row ``predict_proba`` of the inference object;
* a 10,000-row decision (held-out rows repeated), median of 5;
* the two-class path: the default two-class models (``--binary``: pima, whose default
  is oblique, and spambase, whose default is depth-3 trees) one-row and 10,000-row
  decisions, and training.core's figure, ``AdaBoost(n_estimators=100)`` on magic, one-row
  ``predict_proba``.

For reference, in the first process only: scikit-learn's ``AdaBoostClassifier`` (SAMME,
trees of the depth and rounds the default chose) and LightGBM (the same rounds, depth and
``2^depth`` leaves) one-row ``predict_proba``.

Usage::

    git clone -q --branch main /work/main /tmp/costwise-main   # the baseline source tree
    python -m bench serving.multiclass_predict --src main=/tmp/costwise-main --src branch=.

Results: ``bench/results/serving/multiclass_predict[-<label>].{json,md}`` (median over
rounds of each tree's medians, and the ratio to the first tree).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.timing import median_seconds

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "datasets"
BATCH = 10_000


def load(name: str) -> tuple[np.ndarray, np.ndarray]:
    import pandas as pd

    df = pd.read_csv(DATA / f"{name}.csv")
    return df.drop(columns="label").to_numpy(np.float64), df["label"].to_numpy()


def split(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, ...]:
    from sklearn.model_selection import train_test_split

    return tuple(train_test_split(X, y, test_size=0.25, random_state=0, stratify=y))


def median_us(f: Any, calls: int, warm: int = 50) -> float:
    """The median microseconds of ``calls`` calls of ``f`` after ``warm`` untimed ones."""
    return median_seconds(f, calls, warm) * 1e6


def cost_matrix(k: int) -> np.ndarray:
    c = np.random.default_rng(k).uniform(1.0, 10.0, size=(k, k))
    np.fill_diagonal(c, 0.0)
    return c


# --------------------------------------------------------------- worker (one source tree)
def worker(args: argparse.Namespace) -> None:
    """Time the source tree on sys.path (set by the parent); print one JSON line."""
    from app.services.decisions.request_costs import CostSetting
    from app.services.decisions.row_decisions import decide_rows
    from models.boosting.adaboost import AdaBoost
    from models.decisions.rule import validate_cost_matrix
    from models.inference.artifacts import load_model
    from models.inference.model import check_features

    work = Path(args.work)
    out: dict[str, Any] = {}
    for name in [*args.datasets, *args.binary]:
        model = load_model((work / f"{name}.zip").read_bytes())
        rows = np.load(work / f"{name}-test.npy")
        n = model.n_features
        setting = CostSetting(validate_cost_matrix(cost_matrix(model.n_classes), model.n_classes),
                              "cost_matrix")  # fmt: skip
        singles = [np.ascontiguousarray(rows[i : i + 1]) for i in range(min(len(rows), 200))]
        it = iter(range(10**9))

        def one(model=model, singles=singles, setting=setting, n=n, it=it) -> Any:  # type: ignore[no-untyped-def]
            x = singles[next(it) % len(singles)]
            return decide_rows(model, check_features(x, n), setting, None)

        r = {"decide_1row_us": median_us(one, args.calls)}
        if name not in args.binary:
            x1 = singles[0]
            r["proba_1row_us"] = median_us(lambda m=model, x=x1: m.predict_proba(x), args.calls)
        big = np.ascontiguousarray(np.resize(rows, (BATCH, n)))
        r["decide_10k_ms"] = statistics.median(
            median_us(lambda m=model, b=big, s=setting: decide_rows(
                m, check_features(b, m.n_features), s, None), 1, warm=1) / 1e3
            for _ in range(5)
        )  # fmt: skip
        out[name] = r
    X, y = load("magic")
    Xtr, Xte, ytr, _ = split(X, y)
    ada = AdaBoost(n_estimators=100).fit(Xtr, ytr)
    x1 = Xte[:1].copy()
    out["magic_adaboost100"] = {"proba_1row_us": median_us(lambda: ada.predict_proba(x1), 3000)}
    print(json.dumps(out))


# ------------------------------------------------------------------------- parent
def train(
    datasets: list[str], work: Path, serve: str = "folds", binary: tuple[str, ...] = ("pima",)
) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT))
    from models.catalog.algorithms import build_estimator
    from models.inference.artifacts import dump_model, load_model

    info: dict[str, Any] = {}
    for name in [*datasets, *binary]:
        X, y = load(name)
        Xtr, Xte, ytr, yte = split(X, y)
        est = build_estimator("auto", {"random_state": 0})
        est.set_params(serve=serve)  # the default serves the fold ensemble
        t0 = time.perf_counter()
        est.fit(Xtr, ytr)
        fit_s = time.perf_counter() - t0
        blob, _ = dump_model(est.to_inference())
        (work / f"{name}.zip").write_bytes(blob)
        np.save(work / f"{name}-test.npy", Xte)
        model = load_model(blob)
        cap = getattr(est, "capacity_", {})
        info[name] = {
            "shape": list(X.shape),
            "n_classes": model.n_classes,
            "fit_s": round(fit_s, 2),
            "n_estimators": int(est.n_estimators_),
            "capacity": {k: cap[k] for k in ("weak_learner", "max_depth", "n_estimators")
                         if k in cap},  # fmt: skip
            "test_accuracy": float((model.predict_proba(Xte).argmax(1) ==
                                    np.searchsorted(np.asarray(model.classes), yte)).mean()),
        }  # fmt: skip
        print(f"trained {name}: {info[name]}", flush=True)
    return info


def references(datasets: list[str], info: dict[str, Any], calls: int) -> dict[str, Any]:
    import lightgbm
    from sklearn.ensemble import AdaBoostClassifier
    from sklearn.tree import DecisionTreeClassifier

    out: dict[str, Any] = {}
    for name in datasets:
        X, y = load(name)
        Xtr, Xte, ytr, _ = split(X, y)
        cap = info[name]["capacity"]
        depth = int(cap.get("max_depth", 6))
        rounds = int(info[name]["n_estimators"])
        x1 = Xte[:1].copy()
        skl = AdaBoostClassifier(DecisionTreeClassifier(max_depth=depth), n_estimators=rounds,
                                 random_state=0).fit(Xtr, ytr)  # fmt: skip
        lgb = lightgbm.LGBMClassifier(n_estimators=rounds, max_depth=depth,
                                      num_leaves=2**depth, verbose=-1, random_state=0)  # fmt: skip
        lgb.fit(Xtr, ytr)
        out[name] = {
            "sklearn_adaboost_proba_1row_us": median_us(
                lambda m=skl, x=x1: m.predict_proba(x), calls
            ),
            "sklearn_n_estimators": len(skl.estimators_),
            "lightgbm_proba_1row_us": median_us(lambda m=lgb, x=x1: m.predict_proba(x), calls),
            "depth": depth,
            "rounds": rounds,
        }
        print(f"references {name}: {out[name]}", flush=True)
    return out


def run_tree(src: Path, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(src))
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", "--work", str(work),
           "--calls", str(args.calls), "--datasets", *args.datasets,
           "--binary", *args.binary]  # fmt: skip
    res = subprocess.run(cmd, env=env, cwd=src, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise SystemExit(f"worker for {src} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def git_commit(src: Path) -> str:
    r = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=src, capture_output=True,
                       text=True, check=False)  # fmt: skip
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=src,
                           capture_output=True, text=True, check=False).stdout.strip()  # fmt: skip
    return (r.stdout.strip() or "not a git checkout") + (" (uncommitted changes)" if dirty else "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", action="append", default=[], help="NAME=DIR (first = baseline)")
    ap.add_argument("--datasets", nargs="+", default=["satimage", "vehicle"])
    ap.add_argument("--binary", nargs="+", default=["pima", "spambase"], help="two-class sets")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=3000)
    ap.add_argument("--reference-calls", type=int, default=200, help="scikit-learn/LightGBM")
    ap.add_argument("--label", default="")
    ap.add_argument(
        "--serve", choices=["folds", "refit"], default="folds",
        help="what the trained default serves: its fold boosters (the default) or one refit",
    )  # fmt: skip
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--work", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args)
        return
    srcs = [tuple(s.split("=", 1)) for s in (args.src or [f"this={ROOT}"])]
    sys.path.insert(0, str(ROOT))
    from bench.record import run_header, write_result

    started = dt.datetime.now(dt.UTC)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        info = train(args.datasets, work, args.serve, tuple(args.binary))
        refs = references(args.datasets, info, args.reference_calls)
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in srcs}
        for r in range(args.rounds):
            for name, src in srcs:
                runs[name].append(run_tree(Path(src).resolve(), args, work))
                print(f"round {r + 1} {name}: {runs[name][-1]}", flush=True)
    load_after = os.getloadavg()
    summary: dict[str, dict[str, dict[str, float]]] = {}
    for name, rounds in runs.items():
        summary[name] = {
            key: {m: statistics.median(rr[key][m] for rr in rounds) for m in rounds[0][key]}
            for key in rounds[0]
        }
    base = srcs[0][0]
    ratios = {
        name: {
            key: {m: summary[name][key][m] / summary[base][key][m] for m in summary[name][key]}
            for key in summary[name]
        }  # fmt: skip
        for name in summary
    }
    result = {
        **run_header(__file__),
        "started": started.isoformat(timespec="seconds"),
        "load_average_before": [round(v, 2) for v in load_before],
        "load_average_after": [round(v, 2) for v in load_after],
        "sources": {name: {"dir": str(src), "git": git_commit(Path(src))} for name, src in srcs},
        "versions": {"numpy": np.__version__, "python": sys.version.split()[0]},
        "models": info,
        "references": refs,
        "median_over_rounds": summary,
        "ratio_to_" + base: ratios,
        "rounds": runs,
    }
    write_result(__file__, result, markdown(result, srcs, base), label=args.label)


def markdown(res: dict[str, Any], srcs: list[tuple[str, str]], base: str) -> str:
    names = [n for n, _ in srcs]
    lines = [
        f"# Multiclass one-row decisions ({res['date']})",
        "",
        f"Command: `{res['command']}`  ",
        f"Machine: {res['machine']}; load average before {res['load_average_before']}, "
        f"after {res['load_average_after']}  ",
        "Sources: " + "; ".join(f"{n} = {s['git']}" for n, s in res["sources"].items()),
        "",
        "Medians over rounds (rounds alternate between the sources) of per-process medians.",
        "",
        "| data | measure | " + " | ".join(names) + " | "
        + " | ".join(f"{n}/{base}" for n in names[1:]) + " |",
        "|---|---|" + "---|" * (2 * len(names) - 1),
    ]  # fmt: skip
    summ = res["median_over_rounds"]
    ratio = res["ratio_to_" + base]
    for key in summ[names[0]]:
        for m in summ[names[0]][key]:
            cells = [f"{summ[n][key][m]:.1f}" for n in names]
            rs = [f"{ratio[n][key][m]:.2f}" for n in names[1:]]
            lines.append(f"| {key} | {m} | " + " | ".join(cells + rs) + " |")
    lines += ["", "Models (default training on a stratified 75%):", ""]
    for name, i in res["models"].items():
        lines.append(f"- {name}: {json.dumps(i)}")
    lines += ["", "References, one-row `predict_proba` (same run, first process):", ""]
    for name, r in res["references"].items():
        lines.append(
            f"- {name}: scikit-learn AdaBoost (depth {r['depth']}, {r['sklearn_n_estimators']} "
            f"trees) {r['sklearn_adaboost_proba_1row_us']:.1f} us; LightGBM ({r['rounds']} "
            f"rounds) {r['lightgbm_proba_1row_us']:.1f} us"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
