"""Cross-fitted scores for calibration: hold-out or k-fold, binary or multiclass, in parallel.

Calibration must be fitted on scores of rows the booster never saw (section 4 of
Nikolaou et al. 2016). :func:`cross_fit` is the one place that arranges this for every
calibrated wrapper of the core (:class:`models.boosting.calibrated.CalibratedBoosting`,
:class:`models.multiclass.calibrated.CalibratedMulticlass`, :mod:`models.auto`):

* ``"holdout"``: a stratified ``fraction`` of the rows is kept for calibration and the
  booster is fitted on the rest (the paper's protocol, section 5.1);
* ``"kfold"``: ``n_folds`` boosters each fitted without one stratified fold give
  out-of-fold scores for every row, and the served booster is refitted on all rows
  (cross-fitting, the improvement the paper suggests).

The fold fits and the final fit are independent, so they run concurrently on
``n_jobs`` threads. Threads, not processes: the boosting loops spend their time in numpy
and scipy kernels (and numba kernels compiled ``nogil``) that release the GIL, the
models stay in memory (nothing is pickled), the progress/cancellation callback of
:mod:`models.boosting.progress` reaches every fit (each worker runs in a copy of the caller's
context), and a process pool would copy the training matrix to every worker.
``bench/training/crossfit.py`` measures threads against joblib's process pool (loky).

Every fit gets its own estimator (a fresh clone with its own seed), so the fitted
models are bit-identical whatever ``n_jobs`` is; the progress of the parallel fits is
reported as one steady count (:func:`models.boosting.progress.fit_parts`).
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

import numpy as np
from sklearn.model_selection import StratifiedKFold, StratifiedShuffleSplit

from models.boosting.progress import fit_parts
from models.exceptions import InvalidInput, TrainingError
from models.kernels.cores import cpus, fitting, waiting

__all__ = [
    "SPLITS",
    "CrossFit",
    "Folds",
    "OutOfFold",
    "cross_calibrated",
    "provides_out_of_fold",
    "check_split_params",
    "cross_fit",
    "default_n_jobs",
    "fold_indices",
    "run_parallel",
    "stratified_subsample",
]

SPLITS = ("holdout", "kfold")

T = TypeVar("T")


def default_n_jobs() -> int:
    """The CPUs this process may use (:func:`models.kernels.cores.cpus`)."""
    return cpus()


def _check_n_jobs(n_jobs: Any) -> int:
    if n_jobs is None:
        return default_n_jobs()
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int | np.integer) or n_jobs == 0:
        raise InvalidInput(f"n_jobs must be a non-zero integer or None, got {n_jobs!r}")
    return default_n_jobs() if n_jobs < 0 else int(n_jobs)


def run_parallel(tasks: Sequence[Callable[[], T]], n_jobs: int | None = None) -> list[T]:
    """Run ``tasks`` on up to ``n_jobs`` threads (None: every CPU); results in task order.

    Each task runs in a copy of the caller's :mod:`contextvars` context, so the progress
    callback installed by the caller (a time limit, a job's progress) sees it. The first
    exception raised by a task (in task order) is raised here after every started task
    has finished; tasks not yet started when one failed are not run.

    Every task runs counted as a fit (:func:`models.kernels.cores.fitting`) and the
    caller lends its own count while it waits: the tree kernel uses numba's threads only
    while fewer fits run than there are CPUs (the last folds when the folds are fewer
    than the cores, or do not divide among them), never on top of busy fold threads.
    """
    jobs = min(_check_n_jobs(n_jobs), len(tasks))
    if jobs <= 1:
        with fitting():
            return [task() for task in tasks]
    failed: list[BaseException] = []

    def guarded(task: Callable[[], T], ctx: contextvars.Context) -> T | None:
        if failed:
            return None  # another task failed: do not start new work
        try:
            with fitting():
                return ctx.run(task)
        except BaseException as e:
            failed.append(e)
            raise

    with waiting(), ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="costwise-fit") as pool:
        futures = [pool.submit(guarded, task, contextvars.copy_context()) for task in tasks]
        for f in futures:
            f.exception()  # wait for all
    for f in futures:
        if (e := f.exception()) is not None:
            raise e
    return [f.result() for f in futures]  # type: ignore[misc]


def check_split_params(
    split: str, fraction: float, n_folds: int, split_name: str = "split"
) -> None:
    """Validate the split settings (messages name the parameter)."""
    if split not in SPLITS:
        raise InvalidInput(f"{split_name} must be one of {list(SPLITS)}, got {split!r}")
    if not 0.0 < float(fraction) < 1.0:
        raise InvalidInput(f"calibration_fraction must be in (0, 1), got {fraction!r}")
    if isinstance(n_folds, bool) or int(n_folds) != n_folds or int(n_folds) < 2:
        raise InvalidInput(f"n_folds must be an integer >= 2, got {n_folds!r}")


class Folds(Sequence[tuple[np.ndarray, np.ndarray]]):
    """The (train, test) row indices of ``k`` folds, kept as one fold number a row.

    ``folds[i]`` builds fold ``i``'s pair when asked (ascending int32 row numbers, or
    int64 beyond 2**31 rows): the k pairs held at once were 4 bytes a row per fold
    (3 folds of 10,000,000 rows: 114 MiB), the fold numbers are one byte a row.
    """

    def __init__(self, fold_of_row: np.ndarray, k: int) -> None:
        self.fold_of_row = fold_of_row
        self.k = int(k)

    def __len__(self) -> int:
        return self.k

    def _index(self, i: int) -> int:
        if not -self.k <= i < self.k:
            raise IndexError(f"fold {i} of {self.k}")
        return i % self.k

    def _rows(self, mask: np.ndarray) -> np.ndarray:
        rows = np.flatnonzero(mask)
        return rows.astype(np.int32) if len(self.fold_of_row) < 2**31 else rows

    def train(self, i: int) -> np.ndarray:
        """The rows fold ``i``'s booster is fitted on (every other fold's)."""
        return self._rows(self.fold_of_row != self._index(i))

    def test(self, i: int) -> np.ndarray:
        """The rows of fold ``i`` (scored by the booster that never saw them)."""
        return self._rows(self.fold_of_row == self._index(i))

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self.k))]
        return self.train(i), self.test(i)


def fold_indices(
    y_index: np.ndarray, n_folds: int, random_state: int | None, classes: np.ndarray
) -> Folds:
    """Stratified (train, test) row indices of ``n_folds`` folds (shuffled by the seed):
    scikit-learn's ``StratifiedKFold`` folds, as :class:`Folds`.

    Raises TrainingError when a class has fewer rows than folds.
    """
    counts = np.bincount(y_index, minlength=len(classes))
    if counts.min() < n_folds:
        raise TrainingError(
            f"class {classes.tolist()[counts.argmin()]!r} has {counts.min()} rows; "
            f"{n_folds}-fold cross-fitting needs at least {n_folds} rows of each class"
        )
    kf = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=random_state)
    fold_of_row = np.empty(len(y_index), dtype=np.int8 if n_folds < 128 else np.int32)
    for i, (_, test) in enumerate(kf.split(np.zeros(len(y_index), dtype=np.uint8), y_index)):
        fold_of_row[test] = i
    return Folds(fold_of_row, n_folds)


def stratified_subsample(y_index: np.ndarray, n_rows: int, random_state: int | None) -> np.ndarray:
    """Sorted indices of the ``n_rows`` rows that scikit-learn's
    ``StratifiedShuffleSplit(n_splits=1, train_size=n_rows, random_state=...)`` draws
    as its training rows, without the other rows' indices.

    The same draws from the same generator in the same order (its class shares, each
    class's permutation), so the same rows; scikit-learn also builds the other rows'
    indices as a Python list of numpy integers (about 40 bytes a row: 381 MiB beside
    10,000,000 rows), which is what this avoids (tested against it).
    """
    from sklearn.utils import check_random_state
    from sklearn.utils.extmath import _approximate_mode

    y_index = np.asarray(y_index)
    n = len(y_index)
    counts = np.bincount(y_index)
    if not 0 < int(n_rows) < n or counts.min() < 2:  # its errors, as before
        split = StratifiedShuffleSplit(n_splits=1, train_size=n_rows, random_state=random_state)
        return np.sort(next(split.split(np.zeros(n, dtype=np.uint8), y_index))[0])
    rng = check_random_state(random_state)
    n_i = _approximate_mode(counts, int(n_rows), rng)
    _approximate_mode(counts - n_i, n - int(n_rows), rng)  # the test shares' draws
    parts = []
    for k, count in enumerate(counts):
        first = rng.permutation(int(count))[: n_i[k]]
        parts.append(np.flatnonzero(y_index == k)[first])
        del first
    return np.sort(np.concatenate(parts))


@dataclass
class CrossFit:
    """What :func:`cross_fit` produced.

    Attributes
    ----------
    estimator : object
        The fitted booster to serve (on all rows with ``"kfold"``, on the boosting rows
        with ``"holdout"``).
    scores : ndarray of shape (n_cal,) or (n_cal, K)
        Scores of the calibration rows from boosters that never saw them.
    rows : ndarray of shape (n_cal,)
        Indices of the calibration rows (all rows with ``"kfold"``).
    info : dict
        ``split``, ``n_boost``, ``n_calibration`` and ``n_folds`` or
        ``calibration_fraction``.
    fold_models : list
        The fold boosters (``"kfold"`` with ``keep_folds=True``; else empty).
    folds : Folds or list of (train, test) index pairs
        The folds used (``"kfold"``; empty with ``"holdout"``).
    """

    estimator: Any
    scores: np.ndarray
    rows: np.ndarray
    info: dict[str, Any]
    fold_models: list[Any] = field(default_factory=list)
    folds: Sequence[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)


class OutOfFold:
    """Honest probabilities of the training rows, from the cross-fitting already done.

    Every row's ``proba`` comes from a booster fitted without the row's fold *and* a
    calibration map fitted without it (:func:`cross_calibrated`), so metrics and plots
    computed from them estimate what the served model does on new rows, without
    holding rows out of its training. The served map is fitted on all rows' scores; the
    maps here each miss one fold (see docs/training.md, "Reported metrics").

    Two classes (:meth:`binary`) keep one column each, ``P(y = 1)`` and the raw score
    (16 bytes a row instead of 40: on 10,000,000 rows 153 MiB instead of 381); ``proba``,
    ``raw`` and ``rows`` are then built when asked for (the same values: ``1 - p``
    beside ``p``), and :attr:`positive` / :attr:`raw_positive` give the columns
    themselves without a copy.

    Attributes
    ----------
    proba : ndarray of shape (n, K)
        Calibrated class probabilities (rows sum to 1).
    raw : ndarray of shape (n, K)
        The raw scores the maps take, as probabilities (before calibration): binary
        ``[1 - s, s]``; multiclass the class scores, rows normalised.
    rows : ndarray of shape (n,)
        Indices of these rows in the training data.
    info : dict
        ``scheme`` and ``n_folds``.
    """

    def __init__(
        self,
        proba: np.ndarray | None,
        raw: np.ndarray | None,
        rows: np.ndarray | None,
        info: dict[str, Any],
        *,
        positive: np.ndarray | None = None,
        raw_positive: np.ndarray | None = None,
    ) -> None:
        if proba is None and (positive is None or raw_positive is None):
            raise ValueError("OutOfFold needs proba and raw, or the two binary columns")
        self._proba, self._raw, self._rows = proba, raw, rows
        self._p1, self._s = positive, raw_positive
        self.info = info

    @classmethod
    def binary(cls, p1: np.ndarray, score: np.ndarray, info: dict[str, Any]) -> OutOfFold:
        """Two classes, every training row in order: ``P(y = 1)`` and the raw score."""
        return cls(None, None, None, info, positive=p1, raw_positive=score)

    def __len__(self) -> int:
        rows = self._p1 if self._proba is None else self._proba
        assert rows is not None  # binary() sets _p1, the other forms _proba
        return len(rows)

    @property
    def proba(self) -> np.ndarray:
        return _two_columns(self._proba, self._p1)

    @property
    def raw(self) -> np.ndarray:
        return _two_columns(self._raw, self._s)

    @property
    def rows(self) -> np.ndarray:
        return np.arange(len(self)) if self._rows is None else self._rows

    @property
    def all_rows(self) -> bool:
        """Whether the rows are every training row, in order (``rows`` is ``arange(n)``)."""
        return self._rows is None

    @property
    def positive(self) -> np.ndarray:
        """``P(y = 1)`` of two classes, (n,) (the second column of ``proba``)."""
        return self._p1 if self._p1 is not None else self.proba[:, 1]

    @property
    def raw_positive(self) -> np.ndarray:
        """The raw score of two classes, (n,) (the second column of ``raw``)."""
        return self._s if self._s is not None else self.raw[:, 1]


def _two_columns(full: np.ndarray | None, positive: np.ndarray | None) -> np.ndarray:
    """``full`` when stored, else ``[1 - positive, positive]`` (two classes)."""
    if full is not None:
        return full
    assert positive is not None
    return np.column_stack([1.0 - positive, positive])


def cross_calibrated(
    fit_map: Callable[[np.ndarray, np.ndarray, np.ndarray | None], Any],
    apply_map: Callable[[Any, np.ndarray], np.ndarray],
    scores: np.ndarray,
    y_index: np.ndarray,
    sample_weight: np.ndarray | None,
    folds: Sequence[tuple[np.ndarray, np.ndarray]],
) -> np.ndarray:
    """Out-of-fold scores calibrated by maps that never saw the row: (n, K) probabilities
    (or (n,) when ``apply_map`` gives one column, e.g. ``P(y = 1)`` of two classes).

    For each fold, ``fit_map(scores, y_index, w)`` is fitted on the other folds' rows
    and ``apply_map(map, scores)`` gives the probabilities of the fold's rows. A map
    evaluated on the very scores it was fitted on looks better than it will on new rows
    (little for Platt's two parameters, more for isotonic regression's steps); this
    removes that optimism at the price of k small map fits.
    """
    n = len(y_index)
    out: np.ndarray | None = None
    for _, test in folds:
        train = np.ones(n, dtype=bool)
        train[test] = False
        fitted = fit_map(scores[train], y_index[train], _subset(sample_weight, train))
        del train  # (and the map's copies of the rows, before the next fold's)
        p = np.asarray(apply_map(fitted, scores[test]), dtype=np.float64)
        if out is None:
            out = np.empty((n, *p.shape[1:]), dtype=np.float64)
        out[test] = p
        del p
    assert out is not None
    return out


def provides_out_of_fold(estimator: Any) -> bool:
    """Whether fitting ``estimator`` sets ``oof_`` (an :class:`OutOfFold`), by its settings.

    Estimators say so with a ``provides_out_of_fold()`` method (cross-fitted
    calibration); others (hold-out calibration, none, JOUS-Boost, ...) do not.
    """
    method = getattr(estimator, "provides_out_of_fold", None)
    return bool(method()) if callable(method) else False


def _subset(a: Any, idx: np.ndarray) -> Any:
    return None if a is None else a[idx]


def cross_fit(
    make_booster: Callable[[], Any],
    X: Any,
    y: np.ndarray,
    y_index: np.ndarray,
    classes: np.ndarray,
    sample_weight: np.ndarray | None = None,
    *,
    split: str = "kfold",
    calibration_fraction: float = 1.0 / 3.0,
    n_folds: int = 5,
    random_state: int | None = None,
    n_jobs: int | None = None,
    score: Callable[[Any, Any], np.ndarray] | None = None,
    check: Callable[[Any], None] | None = None,
    keep_folds: bool = False,
    refit: bool = True,
) -> CrossFit:
    """Fit boosters so that every calibration row is scored by a booster that never saw it.

    Parameters
    ----------
    make_booster : callable
        Returns a fresh unfitted booster (its own seed) for each fit.
    X, y : arrays
        Training rows and labels.
    y_index : ndarray of int
        Class index of each row (stratification).
    classes : ndarray
        Sorted labels (for messages).
    sample_weight : ndarray, optional
        Passed to every fit (the subset of its rows).
    split, calibration_fraction, n_folds, random_state
        See the module docstring (``random_state`` seeds the split).
    n_jobs : int or None
        Threads for the fits; None or -1: every CPU; 1: one after another.
    score : callable, optional
        ``score(booster, X_rows)`` giving the calibration scores; default
        ``booster.score_samples(X_rows)``.
    check : callable, optional
        Called on every fitted booster (e.g. to refuse a fold that lost a class).
    keep_folds : bool
        Keep the fold boosters in the result (for model selection on their staged scores).
    refit : bool
        ``"kfold"``: also fit the booster to serve on all rows (default). False: no final
        fit (``estimator`` is None) and the fold boosters are kept, to be served together
        (:mod:`models.inference.fold_ensemble`).

    Raises
    ------
    TrainingError
        A class has too few rows for the split.
    """
    score = score or (lambda booster, rows: booster.score_samples(rows))
    n = len(y)
    counts = np.bincount(y_index, minlength=len(classes))

    def fit(idx: np.ndarray | None) -> Any:
        booster = make_booster()
        if idx is None:
            booster.fit(X, y, sample_weight=sample_weight)
        else:
            booster.fit(X[idx], y[idx], sample_weight=_subset(sample_weight, idx))
        if check is not None:
            check(booster)
        return booster

    if split == "holdout":
        f = float(calibration_fraction)
        per_class = 1.0 / min(f, 1.0 - f)  # infinite for a subnormal f such as 5e-324
        if not per_class < 2**53:
            raise TrainingError(
                f"a stratified calibration split of {f:.3g} needs more than 2**53 rows of "
                "each class; choose a calibration_fraction nearer 0.5"
            )
        need = max(2, int(np.ceil(per_class)))
        if counts.min() < need:
            few = classes[counts.argmin()]
            few = few.item() if isinstance(few, np.generic) else few  # 0, not np.int64(0)
            raise TrainingError(
                f"class {few!r} has {counts.min()} rows; a stratified "
                f"calibration split of {f:.3g} needs at least {need} rows of each class"
            )
        splitter = StratifiedShuffleSplit(n_splits=1, test_size=f, random_state=random_state)
        boost_idx, cal_idx = next(splitter.split(np.zeros(n), y_index))
        booster = fit(boost_idx)
        return CrossFit(
            booster,
            np.asarray(score(booster, X[cal_idx])),
            cal_idx,
            {
                "split": "holdout",
                "calibration_fraction": f,
                "n_boost": int(len(boost_idx)),
                "n_calibration": int(len(cal_idx)),
            },
        )

    k = int(n_folds)
    folds = fold_indices(y_index, k, random_state, classes)

    def fit_fold(i: int) -> Any:  # the fold's rows built when its fit starts
        return fit(folds.train(i))

    # the k fold fits and the final fit, concurrently; progress: one run of k + 1 fits
    with fit_parts(k + 1 if refit else k) as part:
        tasks: list[Callable[[], Any]] = [part(i, partial(fit_fold, i)) for i in range(k)]
        if refit:
            tasks.append(part(k, partial(fit, None)))
        fitted = run_parallel(tasks, n_jobs)
    fold_models, final = fitted[:k], (fitted[k] if refit else None)
    scores: np.ndarray | None = None
    for i, model in enumerate(fold_models):
        test_idx = folds.test(i)
        s = np.asarray(score(model, X[test_idx]))
        if scores is None:
            scores = np.empty((n, *s.shape[1:]), dtype=np.float64)
        scores[test_idx] = s
        del s, test_idx
    assert scores is not None
    return CrossFit(
        final,
        scores,
        np.arange(n),
        {"split": "kfold", "n_folds": k, "n_boost": n, "n_calibration": n},
        fold_models if keep_folds or not refit else [],
        folds,
    )


def labelled_rows(
    X: Any, y: Any, *, two_classes: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Check the training rows of a calibrated wrapper; ``(X, y, classes, y_index, counts)``.

    ``X`` becomes float64 unless it already is an array; ``y`` must be 1-D with one label
    per row of ``X``; ``classes`` are the sorted labels (exactly two with
    ``two_classes``, else at least two), ``y_index`` each row's index into them and
    ``counts`` the rows per class.

    Raises
    ------
    InvalidInput
        ``y`` of the wrong shape.
    TrainingError
        The wrong number of classes.
    """
    X = np.asarray(X, dtype=np.float64) if not hasattr(X, "dtype") else X
    y = np.asarray(y)
    if y.ndim != 1 or len(y) != len(X):
        raise InvalidInput(
            f"y must be 1-D with one label per row of X ({len(X)} rows), got shape {y.shape}"
        )
    classes, y_index, counts = np.unique(y, return_inverse=True, return_counts=True)
    if two_classes and len(classes) != 2:
        raise TrainingError(
            f"labels must hold exactly two classes, got {len(classes)}: {classes.tolist()[:10]}"
        )
    if len(classes) < 2:
        raise TrainingError(f"at least two classes are needed, got {classes.tolist()}")
    return X, y, classes, y_index, counts
