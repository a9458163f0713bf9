"""Training where the data lives: boosting over a partitioned data set on a Dask cluster.

What lives here: :func:`fit_calibrated_adaboost` trains calibrated AdaMEC (plain AdaBoost
of a fixed number of stumps, calibrated on cross-fitted out-of-fold scores) over a
partitioned Parquet data set or a Dask DataFrame, and returns the
:class:`~models.inference.model.InferenceModel` the service stores and serves, the same
type a single-machine fit gives. It may import the rest of the core and, lazily and only
here, ``dask``/``distributed`` and ``pyarrow``; never ``app`` code.

How a training runs (the driver is the calling process, the data stays on the workers):

1. *Edges* (:mod:`models.distributed.rows`). Each worker reads its partitions and sends a
   mergeable summary (labels, distinct values while at most 255 per feature, a bottom-k
   sample of its rows by a hash priority); the summaries are merged in a tree of tasks
   and the driver receives the merged summary, once: edges exact for features of at most
   255 distinct values, sampled quantiles (with the DKW bound stated there) otherwise.
2. *Codes*. Each worker reads its partitions again and keeps them as uint8 codes, labels
   and each row's fold (stratified by a hash of the row: no shuffle, no row ids).
3. *Rounds*. Per round, one task per partition applies the ``k + 1`` boosters' last
   stumps to its weights and sums the new weights' histogram (feature, bin, booster x
   label) in one pass (:mod:`models.distributed.partitions`); a tree of tasks adds the
   partition histograms and the driver receives one: ``d x 256 x 2 (k + 1)`` float64
   (50 features, 5 folds: 1.2 MB) whatever the rows. The driver picks each booster's
   stump with the single-machine stump's own split search
   (:func:`models.weak.stump.choose_stump`), its weighted error from the same histogram,
   alpha by Eq. 5 and the single-machine loop's stopping rules, and sends back ``k + 1``
   stumps (seven numbers each).
4. *Calibration*. Each worker scores its rows with their fold's booster; the driver
   receives the out-of-fold scores (n floats, with labels and folds), fits the
   calibration map and builds the served model (the booster on all rows, mapped from
   bin codes to raw values by :func:`models.boosting.prebinned.raw_space`).

Without ``n_estimators`` the rounds are chosen (:mod:`models.distributed.capacity`): every
booster grows to the cap of ``auto``'s stump entry, each worker keeps its rows' staged
out-of-fold scores at ``auto``'s checkpoints, and the Platt fits of all checkpoints run
together as passes that reduce eight sums per checkpoint; the rounds are the minimum of
the smoothed calibrated out-of-fold loss, ``auto``'s rule (reused from
:mod:`models.auto`, which this package may import), recorded in ``info["capacity"]``.

Raw rows never reach the driver. The ``k`` fold boosters and the served one are grown in
the same passes over the data (a fold booster's weights are zero on its fold's rows).

Why futures of immutable partitions, not actors: a partition's codes and every round's
weights are Dask futures, and every task is a pure function of its inputs (a round's
weights are a new array). Dask keeps the lineage of each future, so when a worker is
lost the scheduler recomputes its partitions on the others (re-reading the files and
replaying the rounds) and the model is the same; an actor's state would die with its
worker. When Dask gives up (the scheduler lost, a task killing workers again and again)
or the cluster has no worker left for ``no_worker_seconds``, the training fails with
:class:`~models.exceptions.ClusterUnavailable` (a ``TrainingError``) naming the cause
and nothing is returned. Only stumps are grown so far.
"""

from models.distributed.adaboost import DistributedFit, fit_calibrated_adaboost, parquet_parts
from models.distributed.rows import edges_of, fold_of_rows, merge, row_keys, summarize

__all__ = [
    "DistributedFit",
    "edges_of",
    "fit_calibrated_adaboost",
    "fold_of_rows",
    "merge",
    "parquet_parts",
    "row_keys",
    "summarize",
]
