"""Calibrated AdaBoost that chooses its own capacity: weak learner depth and rounds.

Calibrated AdaMEC (Nikolaou et al. 2016) as in :mod:`models.boosting.calibrated` -- plain
AdaBoost (SAMME for more than two classes), its scores calibrated on rows the booster
never saw, decisions by the cost-shifted threshold at request time -- with the two
numbers a user would otherwise have to tune chosen from the data:

* the **weak learner** from a small grid ordered by capacity, from the additive end
  (decision stumps, many rounds: nearly linear or additive data) to deeper trees (data
  with interactions): :data:`DEFAULT_GRID`;
* the **number of rounds** by early stopping on the out-of-fold loss (log loss by
  default, or Brier score) of the *calibrated* probabilities.

How (one search, a bounded number of fits), stage by stage, one module each:

1. :mod:`~models.auto.grid` -- the candidates: :data:`DEFAULT_GRID` (two classes) and
   :data:`MULTICLASS_GRID`, capped by ``max_rounds``; the oblique entry only on small
   data (:data:`OBLIQUE_MAX_CELLS`).
2. :mod:`~models.auto.search` -- the cross-fitting folds of the calibration
   (:mod:`models.boosting.crossfit`, stratified, ``n_folds``) are fitted once per grid entry with
   its maximum rounds, concurrently. Staged scores of each fold model on its held-out
   fold give the out-of-fold scores of *every* round count for the price of one fit; at
   each checkpoint the calibration map is fitted on them and the calibrated loss
   computed (the validation curve, :mod:`~models.auto.curve`). Grid entries are tried in
   order; the search stops at the first entry whose loss is clearly worse than the best
   (:data:`~models.auto.search.STOP_MARGIN`: more capacity than the data supports), and
   skips entries whose estimated time would not fit before the training deadline
   (:func:`models.boosting.progress.time_left`, set by the service from
   ``COSTWISE_MAX_TRAINING_SECONDS``) or ``time_budget``. The final stage's time is
   estimated for every entry tried (from its fold fits); when the best entry's would not
   fit in 90% of the time left, the best entry whose does is taken, else the cheapest
   (``capacity_["time_fallback"]``). The (weak learner, rounds) pair of least loss wins
   (ties: the smaller capacity); the loss is the validation curve smoothed over
   neighbouring checkpoints (:func:`smoothed`). (Refitting an entry still falling at its
   cap with more rounds, :data:`~models.auto.search.EXTEND_MAX_FACTOR`, is off: measured,
   not adopted.)
3. :mod:`~models.auto.final` -- small data (at most ``max_search_rows`` rows): the
   calibration map is the one fitted on the winning checkpoint's out-of-fold scores --
   the search *is* the cross-fitting -- and (``serve="folds"``, the default) the k fold
   boosters of the winning entry, truncated to the chosen rounds, are served as a fold
   ensemble: the map applied to the mean of their scores (:mod:`models.inference.fold_ensemble`;
   no further fit). More than two classes: the mean of the k SAMME boosters' vote
   fractions, one merged vote ensemble (:class:`~models.inference.fold_ensemble.FoldVoteBoosters`),
   under the multinomial map. With ``serve="refit"`` (and for SAMME's ``"logistic"``
   score, which has no merged form) one final booster is fitted on all rows instead.
   Large data: the search ran on a stratified subsample of ``max_search_rows`` rows with
   ``min(n_folds, 3)`` folds, and the winner is cross-fitted on all rows with
   ``min(n_folds, 3)`` folds (ample for a two-parameter Platt map at that size);
   ``serve="folds"``: those fold boosters are served as a fold ensemble, without the
   refit on all rows.
4. :mod:`~models.auto.record` -- ``capacity_`` records the choice and the validation
   curves (the version's record and its ``capacity`` plot).

The estimators (:mod:`~models.auto.estimators`: :class:`AutoCalibratedBoosting`,
:class:`AutoCalibratedMulticlass`, one base; :mod:`~models.auto.default`:
:class:`AutoCalibrated`, either by the number of classes) take one vocabulary of
parameters (:mod:`~models.auto.params`, the HTTP API's names; the former ``method`` is
an alias of ``calibration``). The fitted model is a
:class:`~models.boosting.calibrated.CalibratedBoosting` (or
:class:`~models.multiclass.calibrated.CalibratedMulticlass`) in every respect that
serving sees: same inference object, artifacts and decision rule (a fold ensemble's
scorer is :class:`~models.inference.fold_ensemble.FoldEnsembleScorer`, artifact format 4). The
catalog entry is :mod:`~models.auto.entry` (:data:`SPEC`).

The package imports only the numerical core; its modules import one way: params, grid,
curve, record -> search, final -> estimators -> default -> entry.

References
----------
N. Nikolaou, N. Edakunni, M. Kull, P. Flach, G. Brown. "Cost-sensitive boosting
algorithms: Do we really need them?" Machine Learning 104 (2016): calibrated AdaMEC,
section 4 and Theorem 1. J. Zhu, H. Zou, S. Rosset, T. Hastie (2009): SAMME.
"""

from __future__ import annotations

from models.auto.curve import checkpoints, smoothed
from models.auto.default import AutoCalibrated
from models.auto.entry import SPEC
from models.auto.estimators import (
    MULTINOMIAL_L2,
    AutoCalibratedBoosting,
    AutoCalibratedMulticlass,
)
from models.auto.final import FIT_BYTES_PER_ROW, FOLD_MEMORY_BUDGET, fold_jobs
from models.auto.grid import DEFAULT_GRID, MULTICLASS_GRID, OBLIQUE_MAX_CELLS
from models.auto.params import (
    ALIASES,
    METRICS,
    MULTICLASS_CALIBRATIONS,
    PARAMS,
    SEARCH_METHODS,
    SERVE,
)
from models.auto.search import STOP_MARGIN

__all__ = [
    "ALIASES",
    "DEFAULT_GRID",
    "FIT_BYTES_PER_ROW",
    "FOLD_MEMORY_BUDGET",
    "METRICS",
    "MULTICLASS_CALIBRATIONS",
    "MULTICLASS_GRID",
    "MULTINOMIAL_L2",
    "OBLIQUE_MAX_CELLS",
    "PARAMS",
    "SEARCH_METHODS",
    "SERVE",
    "SPEC",
    "STOP_MARGIN",
    "AutoCalibrated",
    "AutoCalibratedBoosting",
    "AutoCalibratedMulticlass",
    "checkpoints",
    "fold_jobs",
    "smoothed",
]
