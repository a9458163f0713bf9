"""Tables, statistics and plots for :mod:`bench.papers.nikolaou`, from its raw CSV files.

``python -m bench.papers.nikolaou_report [--out docs/results/nikolaou]`` rebuilds
``areas.csv``, ``summary.json``, ``report.md`` and the PNG plots from ``raw.csv``,
``fig6.csv``, ``defaults.csv`` and ``run.json``.

Training failures (a ``TrainingError``, e.g. AdaCost's first learner without a positive
alpha, footnote 9 of [1]_) are kept in ``raw.csv`` with their message. For areas and
ranks a failed fit counts as the empty ensemble ``F = 0``: uncalibrated, its sign rule
predicts every row positive (``Q = z``); calibrated, the constant score is mapped to the
(balanced) base rate 1/2, so ``Q = min(z, 1 - z)``. Failure counts are reported.

References
----------
.. [1] Nikolaou et al. (2016), Machine Learning 104, 359-384, section 5, Figs. 4-7.
.. [2] Demsar, J. (2006). Statistical comparisons of classifiers over multiple data sets.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bench.papers import common as H

TRIO = ("AdaMEC-Cal", "CGAda-Cal", "AsymAda-Cal")
#: The two uncalibrated AdaMEC rules (Eq. 24 on s(x), Eq. 25 on s'(x)): thresholded at the
#: deployment skew like the calibrated models, not by a training-skew sign rule.
ADAMEC_UNCAL = ("AdaMEC-vote", "AdaMEC-logistic")
FIG7 = (*ADAMEC_UNCAL, "AdaMEC-Cal", "CSB2", "AdaC1")
#: Fig. 7 panels: these tasks when present (large and high-dimensional first, as the
#: paper's discussion of its Fig. 7), then the others alphabetically, six in all.
FIG7_TASKS = ("spambase", "chess", "splice:0-vs-rest", "magic", "pima", "sonar")
#: Tasks with at least this many training rows are "large" in the size-split ranking.
LARGE_TRAIN_ROWS = 1000


def dataset_of(task: str) -> str:
    """The data set a task comes from: ``"satimage:2-vs-rest"`` -> ``"satimage"``."""
    return str(task).split(":", 1)[0]


def by_dataset(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with each task replaced by its data set, so that the one-vs-rest tasks of one
    data set count as ONE entry in ranks and tests (their splits are averaged together; each
    task has the same number of splits, so every task weighs the same inside its data set).

    19 of the paper's 29 tasks are one-vs-rest splits of 5 data sets; ranking them as 29
    independent data sets overstates N in the Friedman/Nemenyi tests (Demsar 2006 assumes
    independent data sets)."""
    return df.assign(task=df["task"].map(dataset_of))


def _impute(df: pd.DataFrame) -> pd.DataFrame:
    """``Qi``: Q with failed fits replaced by the empty ensemble's loss (module docstring)."""
    df = df.copy()
    cal = df["method"].astype(str).str.endswith("-Cal") | ~df["method"].isin(_uncal_cs(df))
    empty = np.where(cal, np.minimum(df["z"], 1 - df["z"]), df["z"])
    df["failed"] = df["error"].notna() & (df["error"].astype(str) != "")
    df["Qi"] = df["Q"].where(np.isfinite(df["Q"]), empty)
    return df


def _uncal_cs(df: pd.DataFrame) -> set[str]:
    """Uncalibrated methods trained with costs (thresholded by their own sign rule)."""
    return {m for m in df["method"].unique()
            if not str(m).endswith("-Cal") and m not in ADAMEC_UNCAL}  # fmt: skip


def _area(g: pd.DataFrame) -> float:
    return H.curve_area(g["z"].to_numpy(), g["Qi"].to_numpy())


def areas(raw: pd.DataFrame) -> pd.DataFrame:
    """One row per (learner, task, repeat, method): Brier-curve area, failures, mean size."""
    df = _impute(raw)
    keys = ["learner", "task", "repeat", "method"]
    g = df.groupby(keys, sort=False)
    out = g.apply(_area, include_groups=False).rename("area").to_frame()
    out["failed_ratios"] = g["failed"].sum()
    out["n_estimators"] = g["n_estimators"].mean()
    return out.reset_index()


def _fmt(m: float, h: float, d: int = 3) -> str:
    if not np.isfinite(m):
        return "n/a"
    return f"{m:.{d}f} ± {h:.{d}f}" if np.isfinite(h) else f"{m:.{d}f}"


def rank_test(ar: pd.DataFrame, learner: str, alpha: float = 0.05) -> tuple[dict[str, Any], str]:
    """Friedman test over all methods (areas per task) and which methods the best one beats
    by more than the Nemenyi critical difference at ``alpha``."""
    a = ar[ar["learner"] == learner]
    mat = a.groupby(["task", "method"])["area"].mean().unstack("method")
    fn = H.friedman_nemenyi(mat.to_numpy(), alpha=alpha)
    ranks = dict(zip(mat.columns, fn["average_ranks"], strict=True))
    order = sorted(ranks, key=lambda m: ranks[m])
    best = order[0]
    tied = [m for m in order[1:] if ranks[m] - ranks[best] <= fn["cd"]]
    beaten = [m for m in order[1:] if ranks[m] - ranks[best] > fn["cd"]]
    res = {"n": fn["n"], "k": fn["k"], "friedman_p": fn["friedman_p"], "cd": fn["cd"],
           "alpha": alpha, "best": best, "not_significantly_worse": tied,
           "significantly_worse": beaten}  # fmt: skip
    md = (f"Friedman over {fn['n']} entries x {fn['k']} methods: p = {fn['friedman_p']:.3g}; "
          f"Nemenyi CD at alpha = {alpha}: {fn['cd']:.2f} ranks. Best: {best} "
          f"({ranks[best]:.2f}); within the CD of it: {', '.join(tied) or 'none'}.")  # fmt: skip
    return res, md


def rank_table(ar: pd.DataFrame, learner: str) -> tuple[pd.DataFrame, str]:
    """Fig. 4/5 table: mean area per task, average rank across tasks, ensemble size."""
    a = ar[ar["learner"] == learner]
    per_task = a.groupby(["task", "method"])["area"].mean().unstack("method")
    ranks = per_task.rank(axis=1, method="average")
    summary = pd.DataFrame(
        {
            "avg_rank": ranks.mean(axis=0),
            "mean_area": per_task.mean(axis=0),
            "mean_size": a.groupby("method")["n_estimators"].mean(),
            "failed_fits": a.groupby("method")["failed_ratios"].sum(),
        }
    ).sort_values("avg_rank")
    rows = []
    for i, (m, r) in enumerate(summary.iterrows(), 1):
        fails = int(r["failed_fits"])
        rows.append(
            [
                i,
                m,
                f"{r['avg_rank']:.2f}",
                f"{r['mean_area']:.4f}",
                f"{r['mean_size']:.1f}",
                fails,
            ]  # fmt: skip
        )
    md = H.md_table(
        ["#", "method", "avg rank (1 = best)", "mean area", "mean ensemble size", "failed fits"],
        rows,
        "rlrrrr",
    )
    return summary, md


def rank_by_size(
    ar: pd.DataFrame, raw: pd.DataFrame, learner: str, top: int = 10
) -> tuple[dict[str, Any], str]:
    """Average ranks on the small and on the large tasks separately (the paper, section
    5.3: calibrated AdaMEC "is most clearly outperforming the competitors on larger
    datasets"). Large: at least :data:`LARGE_TRAIN_ROWS` training rows after balancing."""
    n_train = raw.groupby("task")["n_train"].max()
    groups = {
        f"small (< {LARGE_TRAIN_ROWS} training rows)": n_train.index[n_train < LARGE_TRAIN_ROWS],
        f"large (>= {LARGE_TRAIN_ROWS} training rows)": n_train.index[n_train >= LARGE_TRAIN_ROWS],
    }
    out: dict[str, Any] = {}
    parts = []
    for name, tasks in groups.items():
        sub = ar[ar["task"].isin(tasks)]
        if sub.empty or learner not in set(sub["learner"]):
            continue
        summ, _ = rank_table(sub, learner)
        out[name] = {"tasks": sorted(tasks), "avg_rank": summ["avg_rank"].to_dict(),
                     "mean_area": summ["mean_area"].to_dict()}  # fmt: skip
        rows = [[i, m, f"{r['avg_rank']:.2f}", f"{r['mean_area']:.4f}"]
                for i, (m, r) in enumerate(summ.head(top).iterrows(), 1)]  # fmt: skip
        parts.append(f"{name}, {len(tasks)} tasks ({', '.join(sorted(tasks))}); first {top}:\n")
        parts.append(H.md_table(["#", "method", "avg rank", "mean area"], rows, "rlrr") + "\n")
    return out, "\n".join(parts)


def area_ci_table(ar: pd.DataFrame, learner: str, methods: list[str]) -> str:
    """Mean area ± 95% CI half-width per task (rows) and method (columns)."""
    a = ar[ar["learner"] == learner]
    rows = []
    for task, g in a.groupby("task", sort=True):
        cells = [task, str(g["repeat"].nunique())]
        best = g.groupby("method")["area"].mean().min()
        for m in methods:
            mean, half = H.mean_ci(g.loc[g["method"] == m, "area"])
            s = _fmt(mean, half)
            cells.append(f"**{s}**" if np.isclose(mean, best) else s)
        rows.append(cells)
    return H.md_table(["task", "splits", *methods], rows, "l" + "r" * (len(methods) + 1))


def fig6(f6: pd.DataFrame, learner: str, alpha: float = 0.01) -> tuple[list[dict[str, Any]], str]:
    """Friedman test + Nemenyi CD on the Brier score of the calibrated trio, equal sizes."""
    d = f6[f6["learner"] == learner]
    res, rows = [], []
    for z, g in d.groupby("z"):
        mat = g.groupby(["task", "method"])["brier"].mean().unstack("method")
        mat = mat.reindex(columns=list(TRIO))
        fn = H.friedman_nemenyi(mat.to_numpy(), alpha=alpha)
        ranks = dict(zip(TRIO, fn["average_ranks"], strict=True))
        best = min(ranks, key=lambda k: ranks[k])
        sig = [
            f"{a}<{b}"
            for a in TRIO
            for b in TRIO
            if ranks[a] + fn["cd"] < ranks[b]
        ]  # fmt: skip
        res.append({"z": float(z), **fn, "ranks": ranks, "significant": sig})
        rows.append(
            [
                f"{z:.3f}",
                *(f"{ranks[m]:.2f}" for m in TRIO),
                f"{fn['friedman_p']:.3g}",
                f"{fn['cd']:.2f}",
                best,
                ", ".join(sig) or "none",
            ]  # fmt: skip
        )
    md = H.md_table(
        [
            "z",
            *(f"rank {m}" for m in TRIO),
            "Friedman p",
            f"CD (alpha={alpha})",
            "best",
            "significant (Nemenyi)",
        ],  # fmt: skip
        rows,
        "lrrrrrll",
    )
    return res, md


def band_table(raw: pd.DataFrame, learner: str) -> tuple[dict[str, Any], str]:
    """Mean Q by skew band and CSB2 saturation (share of models predicting one class only)."""
    df = _impute(raw[raw["learner"] == learner])
    bands = {
        "z <= 0.1 or z >= 0.9": (df["z"] <= 0.1) | (df["z"] >= 0.9),
        "z < 0.2 or z > 0.8": (df["z"] < 0.2) | (df["z"] > 0.8),
        "0.3 < z < 0.7": (df["z"] > 0.3) & (df["z"] < 0.7),
    }
    out: dict[str, Any] = {}
    rows = []
    methods = sorted(df["method"].unique())
    for name, mask in bands.items():
        sub = df[mask]
        per = sub.groupby(["task", "z", "method"])["Qi"].mean().unstack("method")
        ranks = per.rank(axis=1).mean(axis=0)
        meanq = per.mean(axis=0)
        out[name] = {"mean_Q": meanq.to_dict(), "avg_rank": ranks.to_dict()}
        for m in FIG7:
            if m in meanq:
                rows.append([name, m, f"{meanq[m]:.4f}", f"{ranks[m]:.2f} of {len(methods)}"])
    sat = df[df["method"].isin(["CSB2", *ADAMEC_UNCAL, "AdaMEC-Cal", "AdaC1"])].copy()
    sat["saturated"] = sat["pred_pos"].isin([0.0, 1.0])
    sat["band"] = np.where((sat["z"] > 0.3) & (sat["z"] < 0.7), "0.3 < z < 0.7", "other")
    s = sat.groupby(["method", "band"])["saturated"].mean().unstack("band")
    out["saturated_share"] = s.to_dict()
    md = H.md_table(["skew band", "method", "mean Q", f"avg rank among {len(methods)}"], rows)
    md += "\n\nShare of fitted models that predict a single class on the test set:\n\n"
    md += H.md_table(
        ["method", *s.columns],
        [[m, *(f"{v:.3f}" for v in r)] for m, r in s.iterrows()],
    )
    return out, md


def adamec_rules(ar: pd.DataFrame, raw: pd.DataFrame, learner: str) -> tuple[dict[str, Any], str]:
    """Calibrated AdaMEC against each uncalibrated rule (Eq. 24 on s(x), Eq. 25 on s'(x)):
    mean area, wins / losses per task, Wilcoxon signed-rank p per task and per data set
    (one-vs-rest tasks averaged), and mean Q in the skew bands."""
    from scipy.stats import wilcoxon

    a = ar[ar["learner"] == learner]
    per_task = a.groupby(["task", "method"])["area"].mean().unstack("method")
    per_ds = by_dataset(a).groupby(["task", "method"])["area"].mean().unstack("method")
    df = _impute(raw[raw["learner"] == learner])
    bands = {
        "z <= 0.1 or z >= 0.9": (df["z"] <= 0.1) | (df["z"] >= 0.9),
        "0.3 < z < 0.7": (df["z"] > 0.3) & (df["z"] < 0.7),
    }
    out: dict[str, Any] = {}
    rows = []
    cal = "AdaMEC-Cal"
    for rule in ADAMEC_UNCAL:
        if rule not in per_task or cal not in per_task:
            continue
        d_task = per_task[cal] - per_task[rule]
        d_ds = per_ds[cal] - per_ds[rule]
        p_task = float(wilcoxon(d_task).pvalue) if (d_task != 0).any() else 1.0
        p_ds = float(wilcoxon(d_ds).pvalue) if (d_ds != 0).any() else 1.0
        q = {b: (df.loc[m & (df["method"] == cal), "Qi"].mean(),
                 df.loc[m & (df["method"] == rule), "Qi"].mean()) for b, m in bands.items()}  # fmt: skip
        res = {
            "mean_area": {cal: float(per_task[cal].mean()), rule: float(per_task[rule].mean())},
            "tasks_calibrated_better": int((d_task < 0).sum()),
            "tasks_calibrated_worse": int((d_task > 0).sum()),
            "datasets_calibrated_better": int((d_ds < 0).sum()),
            "datasets_calibrated_worse": int((d_ds > 0).sum()),
            "wilcoxon_p_per_task": p_task,
            "wilcoxon_p_per_dataset": p_ds,
            "mean_Q_by_band": {b: {cal: float(v[0]), rule: float(v[1])} for b, v in q.items()},
        }
        out[rule] = res
        rows.append(
            [
                rule,
                f"{per_task[cal].mean():.4f} vs {per_task[rule].mean():.4f}",
                f"{res['tasks_calibrated_better']} / {res['tasks_calibrated_worse']} of {len(d_task)}",
                f"{p_task:.2g}",
                f"{res['datasets_calibrated_better']} / {res['datasets_calibrated_worse']} of {len(d_ds)}",
                f"{p_ds:.2g}",
                *(f"{v[0]:.4f} vs {v[1]:.4f}" for v in q.values()),
            ]
        )
    md = H.md_table(
        [
            "uncalibrated rule",
            "mean area, AdaMEC-Cal vs rule",
            "tasks: Cal better / worse",
            "Wilcoxon p (tasks)",
            "data sets: Cal better / worse",
            "Wilcoxon p (data sets)",
            *(f"mean Q {b}, Cal vs rule" for b in bands),
        ],
        rows,
    )
    return out, md


def defaults_table(dfl: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """Section 6: area, Brier score and Q at three skews per calibration configuration."""
    df = _impute(dfl.assign(method=dfl["method"].where(dfl["method"].str.startswith("uncal"),
                                                       dfl["method"] + "-Cal")))  # fmt: skip
    g = df.groupby(["task", "repeat", "method"])
    ar = g.apply(_area, include_groups=False).rename("area").reset_index()
    per_task = ar.groupby(["task", "method"])["area"].mean().unstack("method")
    ranks = per_task.rank(axis=1).mean(axis=0)
    per_ds = by_dataset(ar).groupby(["task", "method"])["area"].mean().unstack("method")
    ranks_ds = per_ds.rank(axis=1).mean(axis=0)
    rows, summ = [], []
    for m in per_task.columns:
        a = ar.loc[ar["method"] == m, "area"]
        b = df.loc[df["method"] == m].groupby(["task", "repeat"])["brier"].first()
        q = {z: df.loc[(df["method"] == m) & np.isclose(df["z"], z), "Qi"].mean()
             for z in (1 / 101, 1 / 11, 0.5, 10 / 11, 100 / 101)}  # fmt: skip
        summ.append({"config": m.removesuffix("-Cal"), "avg_rank": ranks[m],
                     "avg_rank_by_dataset": ranks_ds[m], "area": a.mean(),
                     "brier": b.mean(), **{f"Q@z={z:.3f}": v for z, v in q.items()}})  # fmt: skip
        rows.append(
            [
                m.removesuffix("-Cal"),
                f"{ranks[m]:.2f}",
                f"{ranks_ds[m]:.2f}",
                _fmt(*H.mean_ci(a), d=4),
                f"{b.mean():.4f}",
                *(f"{v:.4f}" for v in q.values()),
            ]  # fmt: skip
        )
    order = np.argsort([float(r[1]) for r in rows])
    rows = [rows[i] for i in order]
    md = H.md_table(
        [
            "configuration",
            "avg rank (per task)",
            "avg rank (per data set)",
            "mean area ± 95% CI (all splits)",
            "Brier",
            "Q z=0.010",
            "Q z=0.091",
            "Q z=0.5",
            "Q z=0.909",
            "Q z=0.990",
        ],  # fmt: skip
        rows,
    )
    md += "\n\nMean area per task:\n\n" + H.md_table(
        ["task", *[c.removesuffix("-Cal") for c in per_task.columns]],
        [[t, *(f"{v:.4f}" for v in r)] for t, r in per_task.iterrows()],
    )
    return pd.DataFrame(summ), md


def plots(raw: pd.DataFrame, ranks: dict[str, pd.DataFrame], out: Path) -> list[str]:
    """Fig. 5 (size vs rank) and Fig. 7 (Brier curves with 95% CI bands); [] without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    files: list[str] = []
    for learner, summ in ranks.items():
        fig, ax = plt.subplots(figsize=(7, 5))
        for m, r in summ.iterrows():
            c = "tab:red" if str(m).endswith("-Cal") else "tab:blue"
            ax.scatter(r["mean_size"], r["avg_rank"], color=c)
            ax.annotate(str(m), (r["mean_size"], r["avg_rank"]), fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel("mean ensemble size")
        ax.set_ylabel("average rank by Brier-curve area (1 = best)")
        ax.set_title(f"Fig. 5 analogue ({learner} learners); red = calibrated")
        name = f"fig5_{learner}.png"
        fig.tight_layout()
        fig.savefig(out / name, dpi=90)
        plt.close(fig)
        files.append(name)
    df = _impute(raw)
    for learner in df["learner"].unique():
        d = df[df["learner"] == learner]
        present = set(d["task"].unique())
        tasks = [t for t in FIG7_TASKS if t in present]
        tasks += [t for t in sorted(present) if t not in tasks][: 6 - len(tasks)]
        n = len(tasks)
        cols = min(3, n)
        fig, axes = plt.subplots((n + cols - 1) // cols, cols, figsize=(5 * cols, 4 * ((n + 2) // 3)),
                                 squeeze=False)  # fmt: skip
        for ax, t in zip(axes.ravel(), tasks, strict=False):
            for m in FIG7:
                g = d[(d["task"] == t) & (d["method"] == m)].groupby("z")["Qi"]
                z = np.array(sorted(g.groups))
                st = [H.mean_ci(g.get_group(v)) for v in z]
                mean = np.array([s[0] for s in st])
                half = np.nan_to_num(np.array([s[1] for s in st]))
                ax.plot(z, mean, marker=".", label=m)
                ax.fill_between(z, mean - half, mean + half, alpha=0.2)
            ax.plot([0, 1], [0, 1], "k:", lw=0.8)
            ax.plot([0, 1], [1, 0], "k:", lw=0.8)
            ax.set_ylim(0, 0.6)
            ax.set_title(t)
            ax.set_xlabel("skew z")
            ax.set_ylabel("Q(z)")
        for ax in axes.ravel()[n:]:
            ax.axis("off")
        axes.ravel()[0].legend(fontsize=8)
        name = f"fig7_{learner}.png"
        fig.tight_layout()
        fig.savefig(out / name, dpi=80)
        plt.close(fig)
        files.append(name)
    return files


def write_report(out: Path) -> dict[str, Any]:
    """Read the raw CSVs in ``out``; write ``areas.csv``, ``summary.json``, ``report.md``, PNGs."""
    out = Path(out)
    info = json.loads((out / "run.json").read_text())
    raw = pd.read_csv(out / "raw.csv", dtype={"error": "str"})
    # Only tasks with every split of the run enter the tables (a time cut may leave one short).
    splits = raw.groupby("task")["repeat"].nunique()
    partial = splits[splits < splits.max()]
    raw = raw[~raw["task"].isin(partial.index)]
    info = {**info, "partial_tasks_excluded": partial.to_dict()}
    ar = areas(raw)
    ar.to_csv(out / "areas.csv", index=False)
    learners = [lr for lr in ("logistic", "stump") if lr in set(raw["learner"])]
    summary: dict[str, Any] = {"run": info, "learners": {}}
    body = [f"Excluded (fewer splits than the others): {partial.to_dict() or 'none'}\n"]
    for run in info.get("merged_runs", []):
        methods = run.get("methods_taken")
        body.append(f"Merged run: `{run.get('command', '')}` ({run.get('date', '')}, "
                    f"{run.get('duration_s', 0) / 60:.1f} min): tasks "
                    f"{', '.join(run.get('tasks_taken', []))}"
                    + (f"; methods {', '.join(methods)}" if methods else "") + "\n")  # fmt: skip
    ranks: dict[str, pd.DataFrame] = {}
    ar_ds = by_dataset(ar)
    for lr in learners:
        summ, md = rank_table(ar, lr)
        ranks[lr] = summ
        a = ar[ar["learner"] == lr]
        test, tmd = rank_test(ar, lr)
        summ_ds, md_ds = rank_table(ar_ds, lr)
        test_ds, tmd_ds = rank_test(ar_ds, lr)
        n_ds = ar_ds.loc[ar_ds["learner"] == lr, "task"].nunique()
        body += [f"## {lr} learners\n", f"Splits per task: {a.groupby('task')['repeat'].nunique().to_dict()}\n",
                 "### Fig. 4/5: average rank by area under the Brier curve, ensemble size\n",
                 "Per task (every one-vs-rest task counted as a data set of its own):\n", md, "",
                 tmd, "",
                 f"Per data set ({n_ds} entries: the one-vs-rest tasks of a data set averaged into "
                 "one entry, the unit the Friedman/Nemenyi tests assume independent):\n", md_ds, "",
                 tmd_ds, ""]  # fmt: skip
        main = ["AdaMEC-Cal", "CGAda-Cal", "AsymAda-Cal", *ADAMEC_UNCAL, "CGAda", "AsymAda",
                "CSB2", "AdaC1"]  # fmt: skip
        main = [m for m in main if m in set(a["method"])]
        body += ["### Area under the Brier curve per task (mean ± 95% CI over splits)\n",
                 area_ci_table(ar, lr, main), ""]  # fmt: skip
        by_size, smd = rank_by_size(ar, raw, lr)
        if smd:
            body += ["### Ranks on small and on large tasks\n", smd, ""]
        bands, bmd = band_table(raw, lr)
        body += ["### Skew bands (CSB2 saturation, AdaC1 at high skew)\n", bmd, ""]
        rules, rmd = adamec_rules(ar, raw, lr)
        if rules:
            body += ["### Calibrated AdaMEC against the two uncalibrated rules (Eq. 24, Eq. 25)\n",
                     "AdaMEC-vote thresholds the vote fraction s(x) (Eq. 24: the paper's Eq. 9 = "
                     "Eq. 19); AdaMEC-logistic thresholds s'(x) = 1/(1+e^(-2F)) (Eq. 25). "
                     "Wilcoxon signed-rank test on the mean areas, two-sided.\n", rmd, ""]  # fmt: skip
        entry: dict[str, Any] = {"ranking": summ.reset_index(names="method").to_dict("records"),
                                 "ranking_by_dataset": summ_ds.reset_index(names="method").to_dict("records"),
                                 "rank_test": test, "rank_test_by_dataset": test_ds,
                                 "bands": bands, "by_size": by_size,
                                 "adamec_rules": rules}  # fmt: skip
        f6path = out / "fig6.csv"
        if f6path.is_file() and f6path.stat().st_size > 200:
            f6 = pd.read_csv(f6path)
            f6 = f6[~f6["task"].isin(partial.index)]
            if lr in set(f6["learner"]):
                res, fmd = fig6(f6, lr)
                res_ds, fmd_ds = fig6(by_dataset(f6), lr)
                entry["fig6"] = res
                entry["fig6_by_dataset"] = res_ds
                body += ["### Fig. 6: calibrated trio with equal ensemble sizes (Brier score ranks, "
                         "Friedman + Nemenyi at alpha = 0.01)\n", "Per task:\n", fmd, "",
                         "Per data set (one-vs-rest tasks averaged into one entry):\n", fmd_ds,
                         ""]  # fmt: skip
        summary["learners"][lr] = entry
    dpath = out / "defaults.csv"
    if dpath.is_file() and dpath.stat().st_size > 200:
        dfl = pd.read_csv(dpath)
        dsum, dmd = defaults_table(dfl[~dfl["task"].isin(partial.index)])
        summary["defaults"] = dsum.to_dict("records")
        body += ["## Section 6: the service's default (AdaBoost, 100 stumps) and alternatives\n",
                 dmd, ""]  # fmt: skip
    files = plots(raw, ranks, out)
    summary["plots"] = files
    body += ["## Plots\n", *(f"![{f}]({f})\n" for f in files)]
    H.write_json(out / "summary.json", summary)
    H.write_summary(out / "report.md", "Nikolaou et al. (2016), section 5: generated tables", info,
                    "\n".join(body))  # fmt: skip
    return summary


def merge_runs(out: Path, other: Path, by_method: bool = False) -> list[str]:
    """Fold the raw CSVs of another run (folder ``other``) into ``out``.

    Tasks present in ``other`` replace the same tasks in ``out`` (a later, complete run of
    a task supersedes an earlier time-cut one); the other tasks of ``out`` are kept. With
    ``by_method``, only the (task, method) pairs present in ``other`` are replaced: a run
    of a few methods (e.g. ``--methods`` with no cost-sensitive method) updates those
    methods and keeps every other method's rows.
    ``run.json`` of ``out`` records the merged run under ``merged_runs``. Returns the
    tasks taken from ``other``.
    """
    out, other = Path(out), Path(other)
    new_tasks = sorted(set(pd.read_csv(other / "raw.csv")["task"]))
    taken: set[str] = set()
    for key in ("raw", "fig6", "defaults"):
        path, opath = out / f"{key}.csv", other / f"{key}.csv"
        old = pd.read_csv(path) if path.is_file() and path.stat().st_size > 0 else None
        new = pd.read_csv(opath) if opath.is_file() and opath.stat().st_size > 0 else None
        if new is not None and by_method:
            taken |= set(new["method"])
        if old is not None and new is not None:
            if by_method:
                pairs = pd.MultiIndex.from_frame(new[["task", "method"]].drop_duplicates())
                keep = ~pd.MultiIndex.from_frame(old[["task", "method"]]).isin(pairs)
            else:
                keep = ~old["task"].isin(new_tasks)
            frames = [old[keep], new]
        else:
            frames = [f for f in (old, new) if f is not None]
        if frames:
            pd.concat(frames, ignore_index=True).to_csv(out / f"{key}.csv", index=False)
    info = json.loads((out / "run.json").read_text())
    merged = [r for r in info.get("merged_runs", []) if r.get("command")]
    entry = {**json.loads((other / "run.json").read_text()), "tasks_taken": new_tasks}
    if by_method:
        entry["methods_taken"] = sorted(taken)
    merged.append(entry)
    info["merged_runs"] = merged
    H.write_json(out / "run.json", info)
    return new_tasks


def main(argv: list[str] | None = None) -> int:
    """CLI: ``python -m bench.papers.nikolaou_report --out DIR [--merge OTHER_RUN_DIR ...]``."""
    p = argparse.ArgumentParser(prog="python -m bench.papers.nikolaou_report")
    p.add_argument("--out", type=Path, default=H.RESULTS_DIR / "nikolaou")
    p.add_argument("--merge", type=Path, nargs="*", default=[],
                   help="folders of other runs whose tasks replace/extend those in --out")  # fmt: skip
    p.add_argument("--by-method", action="store_true",
                   help="with --merge: replace only the (task, method) pairs of the other run")  # fmt: skip
    args = p.parse_args(argv)
    for other in args.merge:
        print(f"merged {other}: {', '.join(merge_runs(args.out, other, args.by_method))}")
    write_report(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
