"""Section 5 of Nikolaou et al. (2016) with this project's implementations (+ section 6 of issue 5).

Protocol (section 5.1 of [1]_): each two-class problem (one-vs-rest for multiclass data)
is balanced by undersampling the majority class; a stratified 25% is the test set; the
calibrated methods fit Platt scaling on a stratified third of the training data (the
booster gets the other two thirds), the uncalibrated ones train on all of it. M = 100
rounds of univariate logistic regression learners (``--learners logistic``; stumps as a
second table). Cost-sensitive methods are trained once per cost ratio ``c_fn / c_fp`` of
the 21 of the paper; AdaMEC (plain AdaBoost) once per split. Uncalibrated AdaMEC is run
with both of the paper's rules (issue 16): ``AdaMEC-vote`` thresholds the vote fraction
s(x) (Eq. 24; the primary definition, Eq. 9 = Eq. 19 by Theorem 1), ``AdaMEC-logistic``
thresholds s'(x) = 1/(1+e^(-2F)) (Eq. 25; section 3.4 / Eq. 23). Thresholds follow the
probabilistic threshold choice: an uncalibrated model trained with costs is thresholded
at the change of skew from training to deployment (``z' ~ 0.5``: its own sign rule, via
:meth:`models.inference.model.InferenceModel.decision_proba`), AdaMEC and every calibrated
model at the deployment skew ``z``. ``Q(z)`` is Eq. 26 on the test set.

Outputs (``--out``, default ``docs/results/nikolaou``): ``raw.csv`` (one row per split,
method, learner and cost ratio: Q, Brier score, ensemble size, share predicted positive,
training failure), ``areas.csv`` (area under each Brier curve), ``fig6.csv`` (calibrated
AdaMEC/CGAda/AsymAda with equal ensemble sizes, footnote 7), ``defaults.csv`` (the
service's default configuration against k-fold and isotonic calibration), ``summary.json``
and ``report.md`` (tables), and PNG plots (Figs. 5 and 7).

References
----------
.. [1] Nikolaou, N., Edakunni, N., Kull, M., Flach, P., Brown, G. (2016). Cost-sensitive
   boosting algorithms: Do we really need them? Machine Learning 104, 359-384, section 5,
   Eqs. 26-28, Figs. 4-7, footnotes 5-10.
"""

from __future__ import annotations

import json
import math
import sys
import time
import traceback
import zlib
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bench.papers import common as H
from models.boosting.calibrated import CalibratedBoosting
from models.catalog.algorithms import algorithms, validate_params
from models.evaluation.metrics import PAPER_COST_RATIOS, brier_score

#: Cost-sensitive methods of the paper, trained per cost ratio (AdaDB: see footnote 5).
CS_METHODS: dict[str, str] = {
    "cgada": "CGAda",
    "asymada": "AsymAda",
    "adac1": "AdaC1",
    "adac2": "AdaC2",
    "adac3": "AdaC3",
    "csb0": "CSB0",
    "csb1": "CSB1",
    "csb2": "CSB2",
    "adacost": "AdaCost",
    "adacost_beta2": "AdaCost(b2)",
    "csada": "CSAda",
}
#: Default task list: every dataset of ../shared/datasets (multiclass ones one-vs-rest).
DEFAULT_DATASETS: tuple[str, ...] = (
    "housevotes", "sonar", "ionosphere", "wdbc", "pima", "german", "wine", "iris",
    "vehicle", "splice", "chess", "spambase", "mushroom", "satimage", "magic",
)  # fmt: skip
#: Section 6: the paper's calibration (Platt on a 1/3 hold-out, the service default until
#: this experiment chose 5-fold cross-fitting), the alternatives, and the two uncalibrated
#: AdaMEC rules (issue 16): the service's ``calibration: "none"`` thresholds the raw score
#: of ``score`` -- the vote fraction s(x) (Eq. 24; the paper's Eq. 9 = Eq. 19, the service's
#: default score) or s'(x) = 1/(1+e^(-2F)) (Eq. 25). Key -> (label, method, split, score).
DEFAULT_CONFIGS: dict[str, tuple[str, str, str, str]] = {
    "platt-holdout": ("platt-holdout (paper)", "platt", "holdout", "vote"),
    "platt-kfold": ("platt-kfold5 (service default)", "platt", "kfold", "vote"),
    "isotonic-holdout": ("isotonic-holdout", "isotonic", "holdout", "vote"),
    "isotonic-kfold": ("isotonic-kfold5", "isotonic", "kfold", "vote"),
    "none-vote": ("uncalibrated AdaMEC, s(x) (Eq. 24)", "none", "holdout", "vote"),
    "none-logistic": ("uncalibrated AdaMEC, s'(x) (Eq. 25)", "none", "holdout", "logistic"),
}
#: Uncalibrated AdaMEC, both rules of the paper (issue 16): the threshold ``z`` on the vote
#: fraction s(x) (Eq. 24: Eq. 9, equal to Eq. 19 by Theorem 1) or on s'(x) = 1/(1+e^(-2F))
#: (Eq. 25, the reading of section 3.4 / Eq. 23). Label -> booster ``score_kind``.
ADAMEC_UNCALIBRATED: dict[str, str] = {"AdaMEC-vote": "vote", "AdaMEC-logistic": "logistic"}
FIG6_METHODS = ("AdaMEC-Cal", "CGAda-Cal", "AsymAda-Cal")


@dataclass(frozen=True)
class Config:
    """Settings of one run (see :func:`main` for the CLI)."""

    tasks: tuple[str, ...]
    source: str
    repeats: int
    seed: int
    ratios: tuple[float, ...]
    rounds: int
    learners: tuple[str, ...]
    methods: tuple[str, ...]
    fig6: bool = True
    defaults: bool = True
    default_configs: tuple[str, ...] = tuple(DEFAULT_CONFIGS)
    max_minutes: float = math.inf
    started: float = field(default_factory=time.time)


def _ratio_label(r: float) -> str:
    return f"{r:g}" if r >= 1 else f"1/{1 / r:g}"


def q_loss(y: np.ndarray, p: np.ndarray, z: float) -> tuple[float, float]:
    """``Q(z)`` of Eq. 26 with "positive iff p >= z", and the share predicted positive."""
    pred = p >= z
    fnr = float(np.mean(~pred[y == 1]))
    fpr = float(np.mean(pred[y == 0]))
    return fnr * (1.0 - z) + fpr * z, float(pred.mean())


def _fit(
    name: str, common: dict[str, Any], params: dict[str, Any], method: str, split: str, seed: int,
    Xtr: np.ndarray, ytr: np.ndarray,
) -> CalibratedBoosting:  # fmt: skip
    spec = algorithms()[name]
    est = spec.build(common, validate_params(spec, params))
    return CalibratedBoosting(est, method=method, split=split, random_state=seed).fit(Xtr, ytr)


def _probs(model: CalibratedBoosting, X: np.ndarray) -> np.ndarray:
    """Decision probabilities: calibrated, or raw with the training skew removed."""
    return model.to_inference().decision_proba(X)[:, 1]


def run_unit(cfg: Config, repeat: int, task_name: str) -> dict[str, list[dict[str, Any]]] | None:
    """One split of one task: every method, learner and cost ratio. ``None`` past the budget."""
    if (time.time() - cfg.started) / 60.0 > cfg.max_minutes:
        return None
    task = _tasks_by_name(cfg)[task_name]
    seed = (cfg.seed + 1000 * repeat + zlib.crc32(task_name.encode())) % (2**31)
    rng = np.random.default_rng(seed)
    Xb, yb = H.balance_undersample(task.X, task.y01, rng)
    Xtr, Xte, ytr, yte = H.stratified_split(Xb, yb, 0.25, seed)
    zs = [1.0 / (1.0 + r) for r in cfg.ratios]
    raw: list[dict[str, Any]] = []
    fig6: list[dict[str, Any]] = []
    defaults: list[dict[str, Any]] = []
    base = {"task": task_name, "repeat": repeat, "n_train": len(ytr), "n_test": len(yte)}

    def record(rows: list, model: CalibratedBoosting | None, err: str, extra: dict, z_list: list,
               ratio_list: list) -> None:  # fmt: skip
        p = None if model is None else _probs(model, Xte)
        n_est = None if model is None else int(model.estimator_.n_estimators_)
        term = None if model is None else getattr(model.estimator_, "termination_reason_", None)
        bs = None if p is None else brier_score(yte, p)
        for z, r in zip(z_list, ratio_list, strict=True):
            q, pos = (math.nan, math.nan) if p is None else q_loss(yte, p, z)
            rows.append({**base, **extra, "ratio": _ratio_label(r), "z": z, "Q": q, "brier": bs,
                         "pred_pos": pos, "n_estimators": n_est, "termination": term,
                         "error": err})  # fmt: skip

    def fit_or_error(*args: Any) -> tuple[CalibratedBoosting | None, str]:
        try:
            return _fit(*args), ""
        except Exception as exc:  # recorded, never hidden (e.g. TrainingError)
            return None, f"{type(exc).__name__}: {exc}"[:200]

    for wl in cfg.learners:
        mk = {"n_estimators": cfg.rounds, "weak_learner": wl, "max_depth": 1, "random_state": seed}
        vote = {**mk, "score_kind": "vote"}
        # AdaMEC: plain AdaBoost trained once per split, evaluated at every skew; uncalibrated
        # with both rules (threshold z on s(x), Eq. 24, or on s'(x), Eq. 25), calibrated on s(x).
        adamec = [(lab, {**mk, "score_kind": kind}, "none")
                  for lab, kind in ADAMEC_UNCALIBRATED.items()]  # fmt: skip
        for label, common, cal_method in [*adamec, ("AdaMEC-Cal", vote, "platt")]:
            m, err = fit_or_error("adaboost", common, {}, cal_method, "holdout", seed, Xtr, ytr)
            extra = {"learner": wl, "method": label, "calibrated": cal_method != "none"}
            record(raw, m, err, extra, zs, list(cfg.ratios))
        for name in cfg.methods:
            for r, z in zip(cfg.ratios, zs, strict=True):
                costs = {"c_fp": 1.0, "c_fn": float(r)}
                for cal in (False, True):
                    m, err = fit_or_error(name, vote, costs, "platt" if cal else "none",
                                          "holdout", seed, Xtr, ytr)  # fmt: skip
                    label = CS_METHODS[name] + ("-Cal" if cal else "")
                    extra = {"learner": wl, "method": label, "calibrated": cal}
                    record(raw, m, err, extra, [z], [r])
        if cfg.fig6:  # footnote 7: AdaMEC and AsymAda get as many learners as CGAda
            for r, z in list(zip(cfg.ratios, zs, strict=True))[::2]:
                costs = {"c_fp": 1.0, "c_fn": float(r)}
                cg, err = fit_or_error("cgada", vote, costs, "platt", "holdout", seed, Xtr, ytr)
                size = cfg.rounds if cg is None else int(cg.estimator_.n_estimators_)
                eq = {**vote, "n_estimators": size}
                ada, e2 = fit_or_error("adaboost", eq, {}, "platt", "holdout", seed, Xtr, ytr)
                asy, e3 = fit_or_error("asymada", eq, costs, "platt", "holdout", seed, Xtr, ytr)
                for lab, m, e in (("AdaMEC-Cal", ada, e2), ("CGAda-Cal", cg, err),
                                  ("AsymAda-Cal", asy, e3)):  # fmt: skip
                    record(fig6, m, e, {"learner": wl, "method": lab, "size": size}, [z], [r])
    if cfg.defaults:  # section 6: the service's configuration (AdaBoost, 100 stumps)
        mk = {"n_estimators": cfg.rounds, "weak_learner": "stump", "max_depth": 1,
              "random_state": seed}  # fmt: skip
        for key in cfg.default_configs:
            label, method, split, score = DEFAULT_CONFIGS[key]
            m, err = fit_or_error("adaboost", {**mk, "score_kind": score}, {}, method, split,
                                  seed, Xtr, ytr)  # fmt: skip
            record(defaults, m, err, {"learner": "stump", "method": label}, zs, list(cfg.ratios))
    return {"raw": raw, "fig6": fig6, "defaults": defaults}


_TASK_CACHE: dict[tuple[str, ...], dict[str, H.BinaryTask]] = {}


def _tasks_by_name(cfg: Config) -> dict[str, H.BinaryTask]:
    key = (cfg.source, *cfg.tasks)
    if key not in _TASK_CACHE:
        out: dict[str, H.BinaryTask] = {}
        wanted = set(cfg.tasks)
        for ds_name in dict.fromkeys(t.split(":")[0] for t in cfg.tasks):
            for t in H.binary_tasks(H.load_dataset(ds_name, cfg.source)):
                if t.name in wanted or t.dataset in wanted:
                    out[t.name] = t
        _TASK_CACHE[key] = out
    return _TASK_CACHE[key]


def expand_tasks(datasets: Sequence[str], source: str) -> tuple[str, ...]:
    """Task names: a dataset name expands to its binary / one-vs-rest tasks;
    ``name:k-vs-rest`` selects one one-vs-rest task."""
    out: list[str] = []
    for d in datasets:
        if ":" in d:
            out.append(d)
        else:
            out += [t.name for t in H.binary_tasks(H.load_dataset(d, source))]
    return tuple(out)


def _checkpoint_key(cfg: Config) -> str:
    """The settings a unit's results depend on (a checkpoint line is reused only if equal)."""
    keep = (cfg.source, cfg.seed, cfg.ratios, cfg.rounds, cfg.learners, cfg.methods, cfg.fig6,
            cfg.defaults)  # fmt: skip
    if cfg.default_configs != tuple(DEFAULT_CONFIGS):  # the key of older checkpoints otherwise
        keep = (*keep, cfg.default_configs)
    return f"{zlib.crc32(repr(keep).encode()):08x}"


def load_checkpoint(path: Path, cfg: Config) -> dict[tuple[int, str], dict[str, Any]]:
    """Finished units of an earlier run with the same settings (``units.jsonl``)."""
    done: dict[tuple[int, str], dict[str, Any]] = {}
    if not path.exists():
        return done
    key = _checkpoint_key(cfg)
    for line in path.read_text().splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:  # a line cut by a kill: that unit runs again
            continue
        if rec.get("key") == key:
            done[(int(rec["repeat"]), str(rec["task"]))] = rec["result"]
    return done


def _run_all(
    cfg: Config, jobs: int, order: str = "task", checkpoint: Path | None = None
) -> tuple[dict[str, list[dict[str, Any]]], list[tuple]]:
    if order == "task":  # all splits of a task before the next: a time cut leaves whole tasks
        units = [(r, t) for t in cfg.tasks for r in range(cfg.repeats)]
    else:  # every task once per repeat: a time cut leaves fewer splits on every task
        units = [(r, t) for r in range(cfg.repeats) for t in cfg.tasks]
    done = load_checkpoint(checkpoint, cfg) if checkpoint is not None else {}
    todo = [u for u in units if u not in done]
    results: dict[tuple[int, str], dict[str, Any] | None] = {u: done[u] for u in units if u in done}
    bar = H.Progress(len(todo), "nikolaou")
    if done:
        print(f"resuming: {len(results)} of {len(units)} units from {checkpoint}", file=sys.stderr)
    sink = None if checkpoint is None else checkpoint.open("a")
    if sink is not None and checkpoint is not None and checkpoint.stat().st_size:
        with checkpoint.open("rb") as fh:  # a line cut by a kill must not swallow the next
            fh.seek(-1, 2)
            if fh.read(1) != b"\n":
                sink.write("\n")

    def finish(u: tuple[int, str], res: dict[str, Any] | None) -> None:
        results[u] = res
        if sink is not None and res is not None:  # one line per unit, flushed: a kill loses one
            line = {"key": _checkpoint_key(cfg), "repeat": u[0], "task": u[1], "result": res}
            sink.write(json.dumps(line) + "\n")
            sink.flush()
        bar.update(1, f"{u[1]} r{u[0]}")

    try:
        if jobs <= 1:
            for u in todo:
                finish(u, run_unit(cfg, *u))
        else:
            with ProcessPoolExecutor(max_workers=jobs) as ex:
                futs = {ex.submit(run_unit, cfg, *u): u for u in todo}
                for f in as_completed(futs):
                    finish(futs[f], f.result())
    finally:
        if sink is not None:
            sink.close()
    bar.close()
    merged: dict[str, list[dict[str, Any]]] = {"raw": [], "fig6": [], "defaults": []}
    skipped: list[tuple] = []
    for u in units:
        _merge(merged, skipped, u, results.get(u))
    return merged, skipped


def _merge(merged: dict, skipped: list, unit: tuple, res: dict | None) -> None:
    if res is None:
        skipped.append(unit)
        return
    for k, v in res.items():
        merged[k] += v


RAW_COLUMNS = (
    "task", "repeat", "learner", "method", "calibrated", "size", "ratio", "z", "Q", "brier",
    "pred_pos", "n_estimators", "termination", "error", "n_train", "n_test",
)  # fmt: skip


def write_raw(out: Path, merged: dict[str, list[dict[str, Any]]], info: dict[str, Any]) -> None:
    """Raw results: ``raw.csv``, ``fig6.csv``, ``defaults.csv`` and ``run.json`` in ``out``."""
    for key in ("raw", "fig6", "defaults"):
        H.write_csv(out / f"{key}.csv", merged[key], RAW_COLUMNS)
    H.write_json(out / "run.json", info)


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point: run, then write raw results, tables and plots."""
    p = H.base_parser("nikolaou", __doc__.splitlines()[0], default_repeats=10)
    p.add_argument("--learners", nargs="+", default=["logistic", "stump"],
                   choices=["logistic", "stump"])  # fmt: skip
    p.add_argument("--methods", nargs="*", default=list(CS_METHODS), choices=list(CS_METHODS),
                   help="cost-sensitive methods (none: AdaMEC only)")  # fmt: skip
    p.add_argument("--rounds", type=int, default=100, help="M, boosting rounds")
    p.add_argument("--ratios", nargs="+", type=float, default=None, help="c_fn/c_fp values")
    p.add_argument("--no-fig6", action="store_true")
    p.add_argument("--no-defaults", action="store_true")
    p.add_argument("--default-configs", nargs="+", default=list(DEFAULT_CONFIGS),
                   choices=list(DEFAULT_CONFIGS), help="section-6 configurations to run")  # fmt: skip
    p.add_argument("--jobs", type=int, default=1, help="worker processes")
    p.add_argument("--max-minutes", type=float, default=math.inf,
                   help="start no new split after this many minutes")  # fmt: skip
    p.add_argument("--order", choices=("task", "repeat"), default="task",
                   help="task: all splits of a task first (in --datasets order); repeat: round-robin")  # fmt: skip
    p.add_argument("--resume", action="store_true",
                   help="reuse the finished splits in OUT/units.jsonl (same settings) and run "
                        "only the rest; every finished split is appended there as it ends")  # fmt: skip
    args = p.parse_args(argv)
    started = time.time()
    source = args.source or ("builtin" if args.quick else "shared")
    if args.quick:
        datasets = args.datasets or ["breast_cancer", "wine:0-vs-rest"]
        ratios = tuple(args.ratios or (10.0, 2.0, 1.0, 0.5, 0.1))
        rounds = min(args.rounds, 10)
        repeats = min(args.repeats, 2)
    else:
        datasets = args.datasets or list(DEFAULT_DATASETS)
        ratios = tuple(args.ratios or PAPER_COST_RATIOS)
        rounds, repeats = args.rounds, args.repeats
    try:
        tasks = expand_tasks(datasets, source)
    except H.DatasetMissing as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    cfg = Config(tasks=tasks, source=source, repeats=repeats, seed=args.seed, ratios=ratios,
                 rounds=rounds, learners=tuple(args.learners), methods=tuple(args.methods),
                 fig6=not args.no_fig6, defaults=not args.no_defaults,
                 default_configs=tuple(args.default_configs),
                 max_minutes=args.max_minutes, started=started)  # fmt: skip
    try:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        checkpoint = out / "units.jsonl"
        if not args.resume and checkpoint.exists():
            checkpoint.unlink()  # a fresh run starts a fresh checkpoint
        merged, skipped = _run_all(cfg, args.jobs, args.order, checkpoint)
    except Exception:
        traceback.print_exc()
        return 1
    info = H.run_info(argv, started, module="bench.papers.nikolaou")
    info["settings"] = {"tasks": list(tasks), "source": source, "repeats": repeats,
                        "ratios": list(ratios), "rounds": rounds, "learners": list(cfg.learners),
                        "methods": list(cfg.methods),
                        "default_configs": list(cfg.default_configs), "skipped_units": [list(u) for u in skipped],
                        "jobs": args.jobs, "order": args.order}  # fmt: skip
    write_raw(out, merged, info)
    try:
        from bench.papers import nikolaou_report as R

        R.write_report(out)
    except Exception:  # the raw results are kept; rerun the report with nikolaou_report
        traceback.print_exc()
        return 1
    print(f"wrote {args.out} ({len(merged['raw'])} rows, {info['duration_s']} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
