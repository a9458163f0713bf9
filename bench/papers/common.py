"""Shared harness for the paper reproductions in ``bench/papers/``.

Every experiment module ``bench/papers/<name>.py`` uses the same pieces:

* data: :func:`load_dataset` reads ``../shared/datasets/<name>.csv`` relative to the
  repository root, or ``$COSTWISE_DATASETS_DIR/<name>.csv`` (header row, ``label`` last
  column, empty cell = NaN) or, with ``source="builtin"``, a dataset shipped inside
  scikit-learn (for CI, no files needed); :func:`binary_tasks` turns a dataset into
  two-class problems (one-vs-rest for multiclass data); :func:`balance_undersample` and
  :func:`stratified_split` implement the balancing and splits of section 5.1 of
  Nikolaou et al. (2016);
* statistics: :func:`mean_ci` (Student-t interval), :func:`average_ranks`,
  :func:`friedman_nemenyi` (Demsar 2006);
* running: :func:`base_parser` (the CLI convention
  ``python -m bench.papers.<name> [--repeats N] [--quick] [--datasets ...] [--out DIR]``),
  :class:`Progress` (one stderr line with counts, elapsed time and ETA);
* tree learner: :func:`add_tree_option` (``--tree costwise|sklearn-gini``) and
  :func:`tree_learner`, which makes ``weak_learner="tree"`` fit scikit-learn's Gini
  ``DecisionTreeClassifier`` each round instead of costwise's histogram tree;
* results: :func:`run_info` (command, date, machine, git commit, versions),
  :func:`write_csv`, :func:`write_json`, :func:`write_summary`.

References
----------
.. [1] Nikolaou, N., Edakunni, N., Kull, M., Flach, P., Brown, G. (2016). Cost-sensitive
   boosting algorithms: Do we really need them? Machine Learning 104, 359-384, section 5.1.
.. [2] Demsar, J. (2006). Statistical comparisons of classifiers over multiple data sets.
   JMLR 7, 1-30.
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import json
import math
import platform
import shlex
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from bench.datasets import DATA_DIR
from bench.machine import machine

REPO_ROOT: Path = Path(__file__).resolve().parents[2]
#: Where the real datasets live (:mod:`bench.datasets`).
DATASETS_DIR: Path = DATA_DIR
#: Default results folder: ``docs/results/<experiment>``.
RESULTS_DIR: Path = REPO_ROOT / "docs" / "results"

#: Datasets shipped inside scikit-learn, usable with ``source="builtin"``.
BUILTIN_DATASETS: tuple[str, ...] = ("breast_cancer", "wine", "iris", "digits")


class DatasetMissing(FileNotFoundError):
    """A dataset file is not where the harness looks for it."""


@dataclass(frozen=True)
class Dataset:
    """A labelled dataset as loaded from disk or scikit-learn.

    ``y`` holds integer class codes ``0..K-1`` (for the shared two-class CSVs, ``1`` is
    the minority class, the positive one).
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    feature_names: tuple[str, ...]
    source: str

    @property
    def n_classes(self) -> int:
        return int(np.unique(self.y).size)


@dataclass(frozen=True)
class BinaryTask:
    """A two-class problem: ``y01`` is 1 for the positive class.

    ``name`` is the dataset name, or ``"<dataset>:<k>-vs-rest"`` for one-vs-rest
    problems of a multiclass dataset; ``positive`` says which class is positive.
    """

    name: str
    dataset: str
    X: np.ndarray
    y01: np.ndarray
    positive: str


def _read_csv(path: Path) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    with path.open(newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader)
        if not header or header[-1] != "label":
            raise ValueError(
                f"{path}: expected the last header column to be 'label', got {header[-1:]}"
            )
        rows = [r for r in reader if r]
    n_cols = len(header)
    X = np.empty((len(rows), n_cols - 1), dtype=np.float64)
    y = np.empty(len(rows), dtype=np.int64)
    for i, row in enumerate(rows):
        if len(row) != n_cols:
            raise ValueError(f"{path}: row {i + 2} has {len(row)} cells, expected {n_cols}")
        X[i] = [float(v) if v.strip() != "" else np.nan for v in row[:-1]]
        y[i] = int(float(row[-1]))
    return X, y, tuple(header[:-1])


def load_dataset(name: str, source: str = "shared", data_dir: Path | None = None) -> Dataset:
    """Load one dataset.

    Parameters
    ----------
    name : str
        File stem in ``../shared/datasets`` (e.g. ``"pima"``) or, with
        ``source="builtin"``, one of :data:`BUILTIN_DATASETS`.
    source : {"shared", "builtin"}
        ``"shared"``: the CSV files next to the repository; ``"builtin"``: scikit-learn.
    data_dir : Path, optional
        Overrides :data:`DATASETS_DIR`.

    Raises
    ------
    DatasetMissing
        The CSV (or the folder) does not exist; the message says where it looked.
    """
    if source == "builtin":
        from sklearn import datasets as skd

        loaders: dict[str, Callable[..., Any]] = {
            "breast_cancer": skd.load_breast_cancer,
            "wine": skd.load_wine,
            "iris": skd.load_iris,
            "digits": skd.load_digits,
        }
        if name not in loaders:
            raise DatasetMissing(
                f"builtin dataset {name!r} unknown; expected one of {list(loaders)}"
            )
        bunch = loaders[name]()
        names = tuple(str(n) for n in getattr(bunch, "feature_names", range(bunch.data.shape[1])))
        y = np.asarray(bunch.target, dtype=np.int64)
        if name == "breast_cancer":  # make malignant (the minority, target 0) the positive class
            y = 1 - y
        return Dataset(name, np.asarray(bunch.data, dtype=np.float64), y, names, "builtin")
    if source != "shared":
        raise ValueError(f"source must be 'shared' or 'builtin', got {source!r}")
    folder = DATASETS_DIR if data_dir is None else Path(data_dir)
    path = folder / f"{name}.csv"
    if not path.is_file():
        hint = (
            f"the datasets folder {folder} does not exist"
            if not folder.is_dir()
            else f"available: {sorted(p.stem for p in folder.glob('*.csv'))}"
        )
        raise DatasetMissing(
            f"dataset {name!r} not found at {path} ({hint}); use --source builtin "
            "(or --quick) to run on data shipped with scikit-learn"
        )
    X, y, names = _read_csv(path)
    return Dataset(name, X, y, names, "shared")


def available_datasets(data_dir: Path | None = None) -> list[str]:
    """Stems of the CSV files in the datasets folder (empty if it is absent)."""
    folder = DATASETS_DIR if data_dir is None else Path(data_dir)
    return sorted(p.stem for p in folder.glob("*.csv")) if folder.is_dir() else []


def binary_tasks(ds: Dataset, classes: Sequence[int] | None = None) -> list[BinaryTask]:
    """Two-class problems of a dataset.

    Two classes: one task, class ``1`` positive. K > 2 classes: one-vs-rest, one task
    per class (``classes`` restricts which), that class positive (section 5.1 of [1]_).
    """
    labels = np.unique(ds.y)
    if labels.size < 2:
        raise ValueError(f"{ds.name}: needs at least two classes, got {labels.tolist()}")
    if labels.size == 2:
        return [
            BinaryTask(
                ds.name, ds.name, ds.X, (ds.y == labels[1]).astype(np.int64), f"class {labels[1]}"
            )
        ]
    chosen = labels if classes is None else [c for c in labels if int(c) in set(classes)]
    return [
        BinaryTask(
            f"{ds.name}:{int(k)}-vs-rest",
            ds.name,
            ds.X,
            (ds.y == k).astype(np.int64),
            f"class {int(k)}",
        )
        for k in chosen
    ]


def balance_undersample(
    X: np.ndarray, y01: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Equal class counts by uniformly undersampling the majority class (section 5.1 of [1]_).

    Rows are returned in a random order.
    """
    pos = np.flatnonzero(y01 == 1)
    neg = np.flatnonzero(y01 == 0)
    m = min(pos.size, neg.size)
    if m == 0:
        raise ValueError("balance_undersample: one class has no rows")
    idx = np.concatenate([rng.choice(pos, m, replace=False), rng.choice(neg, m, replace=False)])
    rng.shuffle(idx)
    return X[idx], y01[idx]


def stratified_split(
    X: np.ndarray, y: np.ndarray, test_size: float, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Stratified ``(X_train, X_test, y_train, y_test)`` with a ``test_size`` share, from a seed."""
    from sklearn.model_selection import train_test_split

    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=test_size, stratify=y, random_state=seed)
    return Xtr, Xte, ytr, yte


# ------------------------------------------------------------------------ statistics
def mean_ci(values: Iterable[float], level: float = 0.95) -> tuple[float, float]:
    """Mean and half-width of the Student-t confidence interval (NaNs dropped).

    The half-width is NaN with fewer than two finite values.
    """
    v = np.asarray([x for x in values if x is not None], dtype=np.float64)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return math.nan, math.nan
    if v.size == 1:
        return float(v[0]), math.nan
    half = stats.t.ppf(0.5 + level / 2, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size)
    return float(v.mean()), float(half)


def average_ranks(scores: np.ndarray, lower_is_better: bool = True) -> np.ndarray:
    """Average rank (1 = best, ties averaged) of each column over the rows of ``scores``.

    ``scores`` has shape (n_datasets, n_methods); rows with a NaN are dropped.
    """
    s = np.asarray(scores, dtype=np.float64)
    s = s[np.all(np.isfinite(s), axis=1)]
    if s.size == 0:
        return np.full(np.asarray(scores).shape[1], np.nan)
    ranks = stats.rankdata(s if lower_is_better else -s, axis=1)
    return ranks.mean(axis=0)


def nemenyi_cd(k: int, n: int, alpha: float = 0.05) -> float:
    """Nemenyi critical difference ``q_alpha sqrt(k (k + 1) / (6 n))`` (Demsar 2006, [2]_).

    ``q_alpha`` is the studentized range quantile (infinite degrees of freedom) over sqrt(2).
    """
    q = stats.studentized_range.ppf(1.0 - alpha, k, np.inf) / math.sqrt(2.0)
    return float(q * math.sqrt(k * (k + 1) / (6.0 * n)))


def friedman_nemenyi(
    scores: np.ndarray, alpha: float = 0.05, lower_is_better: bool = True
) -> dict[str, Any]:
    """Friedman test and Nemenyi critical difference over ``scores`` (datasets x methods).

    Returns a dict with ``average_ranks``, ``n`` (datasets), ``k`` (methods),
    ``friedman_statistic``, ``friedman_p`` (NaN when fewer than 2 datasets or all tied),
    ``cd`` (Nemenyi critical difference at ``alpha``) and ``alpha``.
    """
    s = np.asarray(scores, dtype=np.float64)
    s = s[np.all(np.isfinite(s), axis=1)]
    n, k = s.shape if s.ndim == 2 else (0, 0)
    out: dict[str, Any] = {"n": int(n), "k": int(k), "alpha": alpha}
    out["average_ranks"] = average_ranks(s, lower_is_better).tolist() if n else [math.nan] * k
    stat, p = math.nan, math.nan
    if n >= 2 and k >= 3:
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                res = stats.friedmanchisquare(*s.T)
            stat, p = float(res.statistic), float(res.pvalue)
        except ValueError:
            pass
    out["friedman_statistic"], out["friedman_p"] = stat, p
    out["cd"] = nemenyi_cd(k, n, alpha) if n >= 1 and k >= 2 else math.nan
    return out


# --------------------------------------------------------------------------- running
def base_parser(name: str, description: str, default_repeats: int = 10) -> argparse.ArgumentParser:
    """The common CLI: ``--repeats --quick --datasets --source --seed --out``."""
    p = argparse.ArgumentParser(prog=f"python -m bench.papers.{name}", description=description)
    p.add_argument("--repeats", type=int, default=default_repeats, help="random splits per dataset")
    p.add_argument("--quick", action="store_true", help="CI smoke run: builtin data, tiny settings")
    p.add_argument(
        "--datasets", nargs="+", default=None, help="dataset names (default: the paper's)"
    )
    p.add_argument(
        "--source",
        choices=("shared", "builtin"),
        default=None,
        help="'shared' = ../shared/datasets, 'builtin' = scikit-learn (default with --quick)",
    )
    p.add_argument("--seed", type=int, default=0, help="base seed; repeat r uses seed + r")
    p.add_argument("--out", type=Path, default=RESULTS_DIR / name, help="output folder")
    return p


def _fmt_time(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "--:--"
    s = int(round(seconds))
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


class Progress:
    """A one-line progress display on stderr: bar, counts, elapsed time, ETA, a note.

    On a terminal the line is redrawn in place; otherwise a line is printed at most
    every ``interval`` seconds (and at the end), so logs stay short.
    """

    def __init__(
        self, total: int, label: str = "", interval: float = 10.0, stream: Any = None
    ) -> None:
        self.total = max(int(total), 0)
        self.label = label
        self.done = 0
        self.start = time.monotonic()
        self.interval = interval
        self.stream = sys.stderr if stream is None else stream
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last = -math.inf

    def update(self, n: int = 1, note: str = "") -> None:
        """Count ``n`` finished units and redraw."""
        self.done += n
        now = time.monotonic()
        if self._tty or now - self._last >= self.interval or self.done >= self.total:
            self._last = now
            self._draw(note)

    def _draw(self, note: str) -> None:
        elapsed = time.monotonic() - self.start
        frac = self.done / self.total if self.total else 1.0
        eta = elapsed * (1 - frac) / frac if frac > 0 else math.inf
        width = 24
        bar = "#" * int(width * frac) + "-" * (width - int(width * frac))
        line = (
            f"{self.label} [{bar}] {self.done}/{self.total} {100 * frac:5.1f}% "
            f"elapsed {_fmt_time(elapsed)} eta {_fmt_time(eta)} {note}"
        )
        if self._tty:
            self.stream.write("\r" + line[:160].ljust(160))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        """Finish the line (newline on a terminal)."""
        if self._tty:
            self.stream.write("\n")
            self.stream.flush()

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.start


# ---------------------------------------------------------------------- tree learner
#: Tree learners of ``--tree`` and how the summaries name them: costwise's histogram tree
#: (what ``weak_learner="tree"`` fits) or scikit-learn's Gini ``DecisionTreeClassifier``
#: refitted every round.
TREES: dict[str, str] = {
    "costwise": "costwise's histogram tree",
    "sklearn-gini": "scikit-learn's Gini DecisionTreeClassifier",
}

_INT32_MAX = int(np.iinfo(np.int32).max)
_BIG = float(np.finfo(np.float64).max)


def add_tree_option(parser: argparse.ArgumentParser) -> None:
    """``--tree {costwise,sklearn-gini}`` (see :func:`tree_learner`)."""
    parser.add_argument(
        "--tree",
        choices=tuple(TREES),
        default="costwise",
        help="tree weak learner: costwise's histogram tree (default) or scikit-learn's Gini "
        "DecisionTreeClassifier refitted each round",
    )


def _export_sklearn_tree(clf: Any, nan_features: np.ndarray, values: np.ndarray) -> Any:
    """A fitted ``DecisionTreeClassifier`` as costwise ``TreeArrays`` with leaf ``values``.

    A NaN at a split on a feature that had no NaN in the training rows goes to the child
    holding more training weight (ties: left), otherwise where scikit-learn learned.
    """
    from models.weak.tree import TreeArrays

    t = clf.tree_
    leaf = t.children_left == -1
    feature = np.where(leaf, -1, t.feature).astype(np.int32)
    thr = np.where(leaf, 0.0, t.threshold)
    thr = np.where(np.isposinf(thr), _BIG, thr)  # "all non-missing values go left"
    left = t.children_left.astype(np.int32)
    right = t.children_right.astype(np.int32)
    wn = t.weighted_n_node_samples
    heavier_left = wn[np.where(leaf, 0, left)] >= wn[np.where(leaf, 0, right)]
    learned = np.asarray(t.missing_go_to_left, dtype=bool)
    seen = nan_features[np.where(leaf, 0, feature)]
    missing_left = np.where(leaf, 0, np.where(seen, learned, heavier_left)).astype(np.uint8)
    value = np.asarray(values, dtype=np.float64)
    return TreeArrays(feature, thr.astype(np.float64), left, right, missing_left, value)


class _SklearnTrees:
    """Per-round ``DecisionTreeClassifier(max_depth)`` fits on fixed rows (one seed each)."""

    def __init__(self, X: np.ndarray, max_depth: int, seed: int) -> None:
        from models.weak.tree import check_depth

        self.max_depth = check_depth(max_depth)
        self.n_features = int(X.shape[1])
        self._X = X
        self._X32 = np.asarray(X, dtype=np.float32)
        self._nan = np.isnan(X).any(axis=0)
        self._rng = np.random.default_rng(seed)

    def _fit(self, X32: np.ndarray, y: np.ndarray, w: np.ndarray) -> Any:
        from sklearn.tree import DecisionTreeClassifier

        seed = int(self._rng.integers(_INT32_MAX))
        return DecisionTreeClassifier(max_depth=self.max_depth, random_state=seed).fit(
            X32, y, sample_weight=w
        )

    def _outputs(self, tree: Any) -> np.ndarray:
        """What the one-tree ensemble answers on the training rows (as served)."""
        from models.weak.tree import trees_ensemble

        single = trees_ensemble([tree], np.ones(1), self.n_features)
        return np.asarray(single.learner_outputs(self._X)[:, 0])


class SklearnTreeTrainer(_SklearnTrees):
    """Binary round trainer (labels -1/+1): a Gini tree, leaves the weighted majority."""

    def __init__(self, X: np.ndarray, y: np.ndarray, max_depth: int, seed: int) -> None:
        super().__init__(X, max_depth, seed)
        self._y = y

    def fit_round(self, w: np.ndarray) -> tuple[Any, np.ndarray]:
        clf = self._fit(self._X32, self._y, w)
        frac = clf.tree_.value[:, 0, :]  # classes_ == [-1, 1]: the loop passes both labels
        tree = _export_sklearn_tree(clf, self._nan, np.where(frac[:, 1] > frac[:, 0], 1.0, -1.0))
        return tree, self._outputs(tree)

    def assemble(self, learners: list[object], alphas: np.ndarray) -> Any:
        from models.weak.tree import trees_ensemble

        return trees_ensemble(learners, alphas, self.n_features)  # type: ignore[arg-type]


class SklearnMulticlassTreeTrainer(_SklearnTrees):
    """Multiclass trainer (SAMME's weighted rounds, the angle-based cost rounds)."""

    def __init__(
        self, X: np.ndarray, y: np.ndarray, n_classes: int, max_depth: int, seed: int
    ) -> None:
        super().__init__(X, max_depth, seed)
        self.n_classes = int(n_classes)
        self._y = np.asarray(y)

    def _labelled(self, clf: Any, labels: np.ndarray) -> tuple[Any, np.ndarray]:
        tree = _export_sklearn_tree(clf, self._nan, labels)
        return tree, self._outputs(tree).astype(np.intp)

    def _leaves(self, clf: Any) -> np.ndarray:
        marked = _export_sklearn_tree(clf, self._nan, np.arange(clf.tree_.node_count))
        return self._outputs(marked).astype(np.intp)

    def fit_weighted(self, w: np.ndarray) -> tuple[Any, np.ndarray]:
        """Tree fitted to the labels with weights ``w``; leaves the heaviest class."""
        clf = self._fit(self._X32, self._y, w)
        labels = np.asarray(clf.classes_)[np.argmax(clf.tree_.value[:, 0, :], axis=1)]
        return self._labelled(clf, labels)

    def fit_costs(self, cost: np.ndarray) -> tuple[Any, np.ndarray]:
        """Tree for ``argmin sum_i cost[i, Phi(x_i)]`` by the weighted-label reduction
        (row i labelled k with weight ``max_j cost[i, j] - cost[i, k]``); leaves the argmin
        of the summed costs of their training rows."""
        from models.weak.tree import TreeArrays

        expanded = cost.max(axis=1, keepdims=True) - cost
        rows, ks = np.nonzero(expanded > 0)
        if rows.size == 0 or np.all(ks == ks[0]):  # nothing to split on: one leaf
            i32 = np.array([-1], dtype=np.int32)
            label = int(np.argmin(cost.sum(axis=0)))
            tree = TreeArrays(
                i32, np.zeros(1), i32, i32, np.zeros(1, np.uint8), np.full(1, float(label))
            )
            return tree, np.full(self._X.shape[0], label, dtype=np.intp)
        clf = self._fit(self._X32[rows], ks, expanded[rows, ks])
        leaf = self._leaves(clf)
        n_nodes = int(clf.tree_.node_count)
        sums = np.stack(
            [
                np.bincount(leaf, weights=cost[:, k], minlength=n_nodes)
                for k in range(self.n_classes)
            ],
            axis=1,
        )
        fallback = np.asarray(clf.classes_)[np.argmax(clf.tree_.value[:, 0, :], axis=1)]
        seen = np.bincount(leaf, minlength=n_nodes) > 0
        return self._labelled(clf, np.where(seen, np.argmin(sums, axis=1), fallback))

    def assemble(self, learners: list[object], betas: np.ndarray) -> Any:
        from models.inference.vote_ensemble import VoteEnsemble
        from models.weak.tree import trees_ensemble

        ens = trees_ensemble(learners, betas, self.n_features)  # type: ignore[arg-type]
        return VoteEnsemble(ens, self.n_classes)


@contextmanager
def tree_learner(name: str) -> Iterator[None]:
    """Within the block, ``weak_learner="tree"`` fits the tree learner ``name`` of :data:`TREES`.

    ``"costwise"`` changes nothing. ``"sklearn-gini"`` makes the binary boosting loop
    (:class:`models.boosting.loop.BaseBoosting`, hence AdaBoost, P-AdaBoost, JOUS, one-vs-rest)
    and the multiclass one (SAMME, angle-based AdaBoost/LogitBoost) fit scikit-learn's
    ``DecisionTreeClassifier(max_depth, criterion="gini")`` every round on the raw
    (float32) features, seeded from the estimator's ``random_state``; for the
    angle-based cost rounds it is fitted to the weighted-label reduction of the costs.
    The trees are exported to costwise's ``"trees"`` node arrays, so prediction is
    unchanged. This is the tree learner ``weak_learner="tree"`` had before costwise's
    histogram tree; it exists here only to reproduce tables made with it.
    """
    if name not in TREES:
        raise ValueError(f"tree learner must be one of {tuple(TREES)}, got {name!r}")
    if name == "costwise":
        yield
        return
    from sklearn.utils import check_random_state

    import models.boosting.loop as binary
    import models.multiclass._base as multi

    base_make = binary.BaseBoosting._make_trainer
    multi_make = multi.multiclass_trainer

    def binary_make(self: Any, X: np.ndarray, y: np.ndarray, sw: np.ndarray) -> Any:
        if self.weak_learner != "tree":
            return base_make(self, X, y, sw)
        seed = check_random_state(self.random_state).randint(_INT32_MAX)
        return SklearnTreeTrainer(X, y, self.max_depth, seed)

    def multiclass_make(
        weak_learner: str, X: np.ndarray, y: np.ndarray, n_classes: int, **kw: Any
    ) -> Any:
        if weak_learner != "tree":
            return multi_make(weak_learner, X, y, n_classes, **kw)
        return SklearnMulticlassTreeTrainer(X, y, n_classes, kw["max_depth"], kw["seed"])

    binary.BaseBoosting._make_trainer = binary_make  # type: ignore[method-assign]
    multi.multiclass_trainer = multiclass_make
    try:
        yield
    finally:
        binary.BaseBoosting._make_trainer = base_make  # type: ignore[method-assign]
        multi.multiclass_trainer = multi_make


# --------------------------------------------------------------------------- results
def _git_commit() -> str:
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        return commit + (" (with uncommitted changes)" if dirty else "") if commit else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def run_info(
    argv: Sequence[str] | None = None, started: float | None = None, module: str | None = None
) -> dict[str, Any]:
    """Facts about this run: command, UTC date, machine, git commit, versions, duration (s).

    ``started`` is a :func:`time.time` value; the duration is measured up to now.
    """
    import numpy
    import scipy
    import sklearn

    args = list(sys.argv[1:] if argv is None else argv)
    cmd = f"python -m {module} " if module else f"{Path(sys.argv[0]).name} "
    return {
        "command": (cmd + " ".join(shlex.quote(a) for a in args)).strip(),
        "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(),
        "git_commit": _git_commit(),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "scikit-learn": sklearn.__version__,
        "duration_s": None if started is None else round(time.time() - started, 1),
    }


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, Mapping):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating | float):
        f = float(obj)
        return f if math.isfinite(f) else None
    if isinstance(obj, Path):
        return str(obj)
    return obj


def write_json(path: Path, obj: Any) -> Path:
    """Write ``obj`` as indented JSON (numpy types converted, NaN/inf -> null)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(_jsonable(obj), indent=1, sort_keys=False) + "\n")
    return path


def write_csv(
    path: Path, rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None
) -> Path:
    """Write dict rows as CSV (columns: ``columns`` or the keys of the first row, in order)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    cols = list(columns) if columns is not None else (list(rows[0].keys()) if rows else [])
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if v is None else v) for k, v in r.items()})
    return path


def md_table(header: Sequence[str], rows: Iterable[Sequence[Any]], align: str | None = None) -> str:
    """A markdown table; ``align`` is one char per column (``l``/``r``), default right for numbers."""
    rows = [list(r) for r in rows]
    al = align or "".join("l" if i == 0 else "r" for i in range(len(header)))
    sep = ["---" if a == "l" else "---:" for a in al]
    lines = ["| " + " | ".join(str(h) for h in header) + " |", "| " + " | ".join(sep) + " |"]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def write_summary(path: Path, title: str, info: Mapping[str, Any], body: str) -> Path:
    """Markdown summary: title, a run block (command, date, machine, duration), body.

    The git commit stays in the JSON of :func:`run_info`, not in the page.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    dur = info.get("duration_s")
    where = str(info.get("machine", ""))
    if "Python" not in where:  # bench.machine.machine() names it already
        where += f", Python {info.get('python', '')}"
    head = [
        f"# {title}",
        "",
        f"- command: `{info.get('command', '')}`",
        f"- date: {info.get('date', '')}",
        f"- machine: {where}; numpy {info.get('numpy', '')}, scipy {info.get('scipy', '')}, "
        f"scikit-learn {info.get('scikit-learn', '')}",
        f"- duration: {'n/a' if dur is None else _fmt_time(float(dur))} ({dur} s)",
        "",
    ]
    path.write_text("\n".join(head) + body.rstrip() + "\n")
    return path


def write_report(path: Path, title: str, info: Mapping[str, Any], body: str) -> int:
    """:func:`write_summary`, then say where it went and how long the run took; 0 (the
    exit status of a bench's ``main``)."""
    write_summary(path, title, info, body)
    print(f"wrote {path} ({info['duration_s']} s)")
    return 0


def paper_table(
    rows: Sequence[str], columns: Sequence[str], cells: Sequence[Sequence[Any]]
) -> dict[str, dict[str, Any]]:
    """A table transcribed from a paper, ``{row: {column: cell}}``, from its cells written
    row by row in the paper's order (a row or a column too many or too few is an error)."""
    return {r: dict(zip(columns, c, strict=True)) for r, c in zip(rows, cells, strict=True)}


def write_results(
    stem: Path, title: str, info: Mapping[str, Any], body: str, **content: Any
) -> int:
    """A run's two outputs: ``<stem>.json`` holding ``{"run": info, **content}`` and the
    report ``<stem>.md`` (:func:`write_report`, whose 0 it returns)."""
    write_json(stem.with_name(stem.name + ".json"), {"run": info, **content})
    return write_report(stem.with_name(stem.name + ".md"), title, info, body)


def curve_area(z: np.ndarray, q: np.ndarray) -> float:
    """Trapezoid area of the Brier curve with endpoints (0, 0) and (1, 0) (as
    :func:`models.evaluation.metrics.brier_curve`); NaN if any point is NaN."""
    order = np.argsort(z)
    zz = np.concatenate(([0.0], np.asarray(z)[order], [1.0]))
    qq = np.concatenate(([0.0], np.asarray(q)[order], [0.0]))
    return float(np.sum((zz[1:] - zz[:-1]) * (qq[1:] + qq[:-1])) / 2.0)
