"""The algorithm-catalog entry of ``auto`` (:data:`SPEC`): the default algorithm.

What the service's catalog (:mod:`models.catalog.algorithms`) lists and builds: the request's
parameters of ``auto`` (``metric``, ``serve``) and the estimator they make,
:class:`~models.auto.default.AutoCalibrated`. The calibration settings of the request
(``calibration``, ``n_folds``) are set on it by :func:`models.catalog.algorithms.build_estimator`
under the same names (:mod:`models.auto.params`).
"""

from __future__ import annotations

from typing import Any

from models.auto.default import AutoCalibrated
from models.auto.params import METRICS, SERVE
from models.specs.algorithm import AlgorithmSpec, ParamSpec

__all__ = ["SPEC"]


def _build(common: dict[str, Any], params: dict[str, Any]) -> AutoCalibrated:
    return AutoCalibrated(
        score_kind=common.get("score_kind", "vote"),
        random_state=common.get("random_state"),
        metric=params.get("metric", "log_loss"),
        serve=params.get("serve", "folds"),
    )


SPEC = AlgorithmSpec(
    name="auto",
    title="Calibrated AdaBoost with automatic capacity (the default)",
    family="any",
    source="Calibrated AdaMEC of Nikolaou et al. (2016) with AdaBoost (two classes) or "
    "SAMME of Zhu et al. (2009) (more classes); weak learner and rounds chosen by "
    "out-of-fold calibrated loss",
    equations="Nikolaou et al. 2016: Eqs. 5-7 (AdaBoost), 24 (score), 20 (decision); "
    "Zhu et al. 2009: SAMME",
    trains_with_costs=False,
    decision_rule="least expected cost over the calibrated probabilities at the "
    "request's costs (two classes: sign[p(y=1|x) - c], Table 3: AdaMEC)",
    build=_build,
    params=(
        ParamSpec(
            "metric",
            "str",
            "log_loss",
            "Out-of-fold loss of the calibrated probabilities that chooses the weak "
            "learner and the rounds.",
            choices=METRICS,
        ),
        ParamSpec(
            "serve",
            "str",
            "folds",
            "What serves the model: 'folds', the cross-fitting boosters together (the "
            "calibration map on the mean of their scores; better decisions, measured), or "
            "'refit', one booster refitted on all rows (the same map; fewer learners per "
            "prediction: a one-row decision of a large multiclass model costs about a "
            "third, see docs/training.md).",
            choices=SERVE,
        ),
    ),
    notes="Chooses the weak learner (stumps with up to 400 rounds, depth-3 trees with up "
    "to 200, depth-6 trees with up to 100, 300 with more than two classes) and the number of rounds by early stopping "
    "on the cross-fitted calibrated log loss; two or more classes (more than two: "
    "SAMME calibrated by one multinomial softmax map of its K vote fractions). "
    "Trained without "
    "costs, so one version serves every cost setting. n_estimators, weak_learner and "
    "max_depth are chosen, not given. Serves the cross-fitting boosters together "
    "(5, or 3 above 20,000 rows; fold ensemble: the map on the mean of their scores, "
    "with two classes spread for the noise the mean removes; "
    "for more than two classes the mean of their vote fractions), no refit.",
)
