"""Per-phase wall and CPU time of a training at 1 and 2 threads, interleaved with LightGBM.

The helper behind ``--threads`` of :mod:`bench.training.default_training` (the default
training, two classes or ``--classes K``) and :mod:`bench.training.tree` (the depth-6 tree
fit). Every timed fit runs in a fresh child process restricted to the first ``t`` CPUs
(``sched_setaffinity``) with ``NUMBA_NUM_THREADS``, ``OMP_NUM_THREADS`` and the BLAS
thread counts set to ``t``; the children alternate -- per round, for each thread count,
costwise then LightGBM -- so that a change in the machine's load hits both. Each child
warms up (numba's cache, imports) on a small fit first and reports the timed fit only.

Phases are timed by wrapping the functions of the training that mark them (one place per
phase: :data:`DEFAULT_PHASES`, :data:`TREE_PHASES`): wall time (``perf_counter``) and the
process's CPU time (``process_time``, every thread), so CPU / wall shows how many cores
a phase kept busy. A phase nested in another is subtracted from it ("fold fits" holds
the booster fits of the search without the staged scores, and so on). Binning happens
inside each fit (every fold fit bins its rows); its CPU time is summed over the threads
(``thread_time``) and reported apart, not subtracted.

Reported per workload: the median over rounds of each phase and of the total, the
median ratio costwise / LightGBM (ratios taken within a round), the 1-to-2-thread
speed-up, and the load average (1 minute) at the start of every child.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

THREAD_ENV = ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


class PhaseClock:
    """Wall and process CPU seconds per phase; nested phases are subtracted from outer ones."""

    def __init__(self) -> None:
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self.binning_cpu = 0.0
        self._stack: list[list[float]] = []  # per open phase: [child wall, child cpu]

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        w0, c0 = time.perf_counter(), time.process_time()
        self._stack.append([0.0, 0.0])
        try:
            yield
        finally:
            wall, cpu = time.perf_counter() - w0, time.process_time() - c0
            inner = self._stack.pop()
            self.wall[name] = self.wall.get(name, 0.0) + wall - inner[0]
            self.cpu[name] = self.cpu.get(name, 0.0) + cpu - inner[1]
            if self._stack:
                self._stack[-1][0] += wall
                self._stack[-1][1] += cpu

    def wrap(self, owner: Any, attr: str, name: str) -> None:
        """Time every call of ``owner.attr`` (a module function or a class method)."""
        f = getattr(owner, attr)

        def timed(*a: Any, **k: Any) -> Any:
            with self.phase(name):
                return f(*a, **k)

        setattr(owner, attr, timed)

    def wrap_binning(self, module: Any) -> None:
        """Sum the CPU time (over threads) of ``module.bin_features``."""
        f = module.bin_features

        def timed(*a: Any, **k: Any) -> Any:
            c0 = time.thread_time()
            try:
                return f(*a, **k)
            finally:
                self.binning_cpu += time.thread_time() - c0

        module.bin_features = timed


def instrument_default(clock: PhaseClock) -> None:
    """The phases of the default training (:mod:`models.auto`)."""
    import models.auto.estimators as est
    import models.auto.search as search
    import models.weak.multiclass as wmc
    import models.weak.stump as wstump
    import models.weak.tree as wtree

    clock.wrap(search, "search_rows", "search rows and folds")
    clock.wrap(search, "fit_entry", "search: staged out-of-fold scores")
    clock.wrap(search, "run_parallel", "search: fold boosters (threads)")
    clock.wrap(search, "entry_losses", "search: calibrated losses per checkpoint")
    clock.wrap(est, "final_fit", "final: fold boosters / refit")
    clock.wrap(est.AutoCapacity, "_final_map", "final: calibration map")
    clock.wrap(est.AutoCapacity, "_out_of_fold", "out-of-fold record")
    clock.wrap(est, "capacity_record", "capacity record")
    for module in (wtree, wstump, wmc):
        clock.wrap_binning(module)


def instrument_tree(clock: PhaseClock) -> None:
    """The phases of a boosted tree fit: the binning, the tree growth, the rest of a round."""
    import models.boosting.adaboost as ada
    import models.weak.tree as wtree

    clock.wrap(wtree, "bin_features", "binning")
    clock.wrap(wtree, "grow_binned_tree", "tree growth (kernel)")
    clock.wrap(wtree.TreeTrainer, "fit_round", "round: weights in, outputs out")
    clock.wrap(ada.AdaBoost, "fit", "boosting loop (weights, alphas)")


def child_main(spec: dict[str, Any], make: Callable[[dict[str, Any]], Any]) -> None:
    """In a child: warm up, time one fit, print the result as one JSON line."""
    which = spec["which"]
    clock = PhaseClock()
    fit, warm = make(spec)
    warm()
    if which == "costwise":
        (instrument_default if spec["workload"] == "default" else instrument_tree)(clock)
    load = os.getloadavg()[0]
    w0, c0 = time.perf_counter(), time.process_time()
    info = fit()
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    phases = {k: [clock.wall[k], clock.cpu[k]] for k in clock.wall}
    if phases:
        phases["other"] = [
            wall - sum(v[0] for v in phases.values()),
            cpu - sum(v[1] for v in phases.values()),
        ]
    out = {
        "wall": wall,
        "cpu": cpu,
        "load_1min": load,
        "phases": phases,
        "binning_cpu": clock.binning_cpu,
        "info": info,
    }
    print("RESULT " + json.dumps(out), flush=True)


def run_child(module: str, spec: dict[str, Any], threads: int) -> dict[str, Any]:
    """Run ``python -m module --child SPEC`` on the first ``threads`` CPUs."""
    env = dict(os.environ)
    for var in THREAD_ENV:
        env[var] = str(threads)
    cpus = sorted(os.sched_getaffinity(0))[:threads]
    proc = subprocess.run(
        [sys.executable, "-m", module, "--child", json.dumps(spec)],
        env=env, capture_output=True, text=True, check=False,
        preexec_fn=lambda: os.sched_setaffinity(0, cpus),
    )  # fmt: skip
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"child {spec} failed: {proc.stderr[-2000:]}")
    return dict(json.loads(lines[-1][len("RESULT ") :]))


def drive(module: str, spec: dict[str, Any], threads: list[int], rounds: int) -> dict[str, Any]:
    """Interleave costwise and LightGBM at each thread count, ``rounds`` times."""
    runs: dict[str, list[dict[str, Any]]] = {}
    for r in range(rounds):
        for t in threads:
            for which in ("costwise", "lightgbm"):
                res = run_child(module, {**spec, "which": which}, t)
                runs.setdefault(f"{which}@{t}", []).append(res)
                print(f"round {r + 1} {which} {t} thread(s): {res['wall']:.2f} s "
                      f"(CPU {res['cpu']:.2f} s, load {res['load_1min']:.2f})", flush=True)  # fmt: skip
    return summarise(runs, threads)


def summarise(runs: dict[str, list[dict[str, Any]]], threads: list[int]) -> dict[str, Any]:
    med = statistics.median
    out: dict[str, Any] = {"threads": threads, "runs": runs, "median": {}, "ratio": {}}
    for key, rs in runs.items():
        phases = {}
        for name in rs[0]["phases"]:
            walls = [r["phases"].get(name, [0.0, 0.0])[0] for r in rs]
            cpus = [r["phases"].get(name, [0.0, 0.0])[1] for r in rs]
            phases[name] = {"wall": round(med(walls), 3), "cpu": round(med(cpus), 3)}
        out["median"][key] = {
            "wall": round(med(r["wall"] for r in rs), 3),
            "cpu": round(med(r["cpu"] for r in rs), 3),
            "binning_cpu": round(med(r["binning_cpu"] for r in rs), 3),
            "load_1min": [round(r["load_1min"], 2) for r in rs],
            "phases": phases,
            "info": rs[0]["info"],
        }
    for t in threads:
        ours, theirs = runs[f"costwise@{t}"], runs[f"lightgbm@{t}"]
        out["ratio"][f"costwise/lightgbm@{t}"] = round(
            med(a["wall"] / b["wall"] for a, b in zip(ours, theirs, strict=True)), 3
        )
    if 1 in threads and 2 in threads:
        for which in ("costwise", "lightgbm"):
            one, two = runs[f"{which}@1"], runs[f"{which}@2"]
            out["ratio"][f"{which} speed-up 1->2"] = round(
                med(a["wall"] / b["wall"] for a, b in zip(one, two, strict=True)), 3
            )
    return out


def markdown(title: str, report: dict[str, Any]) -> list[str]:
    """The per-phase table (median wall, CPU / wall, speed-up) and the ratios."""
    ts = report["threads"]
    lines = [f"### {title}", ""]
    cols = ["phase"] + [f"{t} thread(s): wall s (CPU/wall)" for t in ts]
    if 1 in ts and 2 in ts:
        cols.append("speed-up 1->2")
    lines += ["| " + " | ".join(cols) + " |", "|---" + "|---:" * (len(cols) - 1) + "|"]
    names = list(report["median"][f"costwise@{ts[0]}"]["phases"])
    for name in [*names, "total"]:
        cells = [name]
        walls = {}
        for t in ts:
            m = report["median"][f"costwise@{t}"]
            p = m if name == "total" else m["phases"].get(name, {"wall": 0.0, "cpu": 0.0})
            walls[t] = p["wall"]
            ratio = p["cpu"] / p["wall"] if p["wall"] > 0 else float("nan")
            cells.append(f"{p['wall']:.2f} ({ratio:.2f})")
        if 1 in ts and 2 in ts:
            cells.append(f"{walls[1] / walls[2]:.2f}" if walls[2] > 0 else "")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for t in ts:
        m = report["median"][f"costwise@{t}"]
        lg = report["median"][f"lightgbm@{t}"]
        lines.append(
            f"- {t} thread(s): costwise {m['wall']:.2f} s, LightGBM {lg['wall']:.2f} s, "
            f"ratio {report['ratio'][f'costwise/lightgbm@{t}']:.2f}x (median of per-round "
            f"ratios); binning CPU {m['binning_cpu']:.2f} s; load (1 min) at the start of "
            f"costwise's runs {m['load_1min']}, LightGBM's {lg['load_1min']}"
        )
    for which in ("costwise", "lightgbm"):
        key = f"{which} speed-up 1->2"
        if key in report["ratio"]:
            lines.append(f"- {which} 1-to-2-thread speed-up: {report['ratio'][key]:.2f}x")
    lines.append("")
    return lines
