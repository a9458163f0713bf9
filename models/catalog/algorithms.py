"""The catalog of trainable algorithms: names, parameters, properties and sources.

Every algorithm the service can train is described by an :class:`AlgorithmSpec`: its
API name, the paper and equations it implements, whether it trains with costs, the
decision rule it applies (Table 3 of Nikolaou et al. 2016), its Table 4 properties where
that paper gives them, its own parameters (:class:`ParamSpec`, with types, defaults and
ranges) and a ``build`` function returning an unfitted estimator. Algorithm modules
define a module-level ``SPEC`` (or ``SPECS``, value types of :mod:`models.specs.algorithm`);
:data:`SPEC_MODULES` lists them.

:func:`build_estimator` is the one place that assembles what is trained: the
algorithm's estimator, wrapped in :class:`~models.boosting.calibrated.CalibratedBoosting` when it
is a plain binary booster, or given the calibration settings it takes when it serves
itself (multiclass, JOUS-Boost, ``auto``). What it returns is always ready to serve:
once fitted, ``to_inference()`` gives the artifact's model.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cache
from typing import Any, Protocol

from models.boosting.calibrated import CalibratedBoosting
from models.exceptions import InvalidInput
from models.inference.model import InferenceModel
from models.specs.algorithm import PARAM_TYPES, AlgorithmSpec, ParamSpec
from models.weak.registry import binary_names, multiclass_names

__all__ = [
    "PARAM_TYPES",
    "ParamSpec",
    "AlgorithmSpec",
    "Calibration",
    "ServableEstimator",
    "algorithms",
    "build_estimator",
    "get_algorithm",
    "trained_booster",
    "validate_params",
    "SPEC_MODULES",
]

# Modules holding SPEC / SPECS; imported lazily by :func:`algorithms`.
SPEC_MODULES: tuple[str, ...] = (
    "models.auto",
    "models.boosting.adaboost",
    "models.variants.padaboost",
    "models.variants.jous",
    "models.variants.cgada",
    "models.variants.asymada",
    "models.variants.adac",
    "models.variants.csb",
    "models.variants.adacost",
    "models.multiclass.angle",
    "models.multiclass.samme_entry",
    "models.multiclass.ovr",
    "models.variants.csboost.cs_adaboost",
    "models.variants.csboost.adadb",
    "models.variants.csboost.cs_realboost",
    "models.variants.csboost.cs_logitboost",
)


def algorithms() -> dict[str, AlgorithmSpec]:
    """All algorithms by API name (loaded once), each listing the ``weak_learners`` it
    fits: ``"binary"`` and ``"multiclass"`` become the names of the weak learners
    registered now (:data:`models.weak.WEAK_LEARNERS`) with such a trainer."""
    every = {"binary": binary_names(), "multiclass": multiclass_names()}
    return {
        name: spec
        if not isinstance(spec.weak_learners, str)
        else replace(spec, weak_learners=every[spec.weak_learners])
        for name, spec in _declared().items()
    }


@cache
def _declared() -> dict[str, AlgorithmSpec]:
    """The algorithms as their modules declare them (imported once)."""
    out: dict[str, AlgorithmSpec] = {}
    for module_name in SPEC_MODULES:
        module = importlib.import_module(module_name)
        specs = getattr(module, "SPECS", None) or [module.SPEC]
        for spec in specs:
            if spec.name in out:
                raise ValueError(f"algorithm {spec.name!r} is defined twice")
            out[spec.name] = spec
    return dict(sorted(out.items()))


def get_algorithm(name: str) -> AlgorithmSpec:
    """The spec called ``name``; InvalidInput lists the valid names otherwise."""
    found = algorithms().get(name)
    if found is None:
        raise InvalidInput(f"algorithm: unknown {name!r}; expected one of {list(algorithms())}")
    return found


def validate_params(spec: AlgorithmSpec, params: Mapping[str, Any] | None) -> dict[str, Any]:
    """Defaults filled in, every value checked; unknown names are refused with the list."""
    params = dict(params or {})
    known = {p.name: p for p in spec.params}
    unknown = sorted(set(params) - set(known))
    if unknown:
        valid = sorted(known) or "none"
        raise InvalidInput(
            f"params: unknown parameter(s) {unknown} for algorithm {spec.name!r}; valid: {valid}"
        )
    return {
        name: (p.check(params[name]) if name in params else p.default) for name, p in known.items()
    }


@dataclass(frozen=True)
class Calibration:
    """How scores are made probabilities (the training request's calibration settings).

    ``method`` is ``platt``, ``isotonic`` or ``none``; ``split`` is ``kfold``
    (cross-fitting over ``n_folds``) or ``holdout`` (``fraction`` of the rows). See
    :class:`models.boosting.calibrated.CalibratedBoosting` for their meaning.
    """

    method: str = "platt"
    split: str = "kfold"
    fraction: float = 1.0 / 3.0
    n_folds: int = 5

    def as_params(self) -> dict[str, Any]:
        """The same settings under the parameter names of self-serving estimators."""
        return {
            "calibration": self.method,
            "calibration_split": self.split,
            "calibration_fraction": self.fraction,
            "n_folds": self.n_folds,
        }


class ServableEstimator(Protocol):
    """What :func:`build_estimator` returns: fit it, then serve ``to_inference()``."""

    def fit(self, X: Any, y: Any) -> Any: ...

    def to_inference(self, feature_names: list[str] | None = None) -> InferenceModel: ...


def build_estimator(
    algorithm: str | AlgorithmSpec,
    common: Mapping[str, Any],
    params: Mapping[str, Any] | None = None,
    calibration: Calibration | None = None,
) -> ServableEstimator:
    """The unfitted estimator of ``algorithm``, always ready to serve once fitted.

    Parameters
    ----------
    algorithm : str or AlgorithmSpec
        A catalog name (see :func:`algorithms`) or its spec.
    common : mapping
        The parameters every algorithm's ``build`` takes: ``n_estimators``,
        ``weak_learner``, ``max_depth``, ``score_kind``, ``random_state``.
    params : mapping, optional
        The algorithm's own parameters (validated here, defaults filled in).
    calibration : Calibration, optional
        Default ``Calibration()`` (Platt, 5-fold cross-fitting).

    Returns
    -------
    ServableEstimator
        A plain binary booster wrapped in :class:`CalibratedBoosting` with
        ``calibration`` (the calibrated form of every variant; ``method="none"`` keeps
        its scores); an estimator that serves itself (has ``to_inference``) with the
        calibration settings among its parameters set to ``calibration``.

    Raises
    ------
    InvalidInput
        Unknown algorithm, invalid parameter or calibration setting.
    """
    spec = get_algorithm(algorithm) if isinstance(algorithm, str) else algorithm
    calibration = calibration or Calibration()
    estimator = spec.build(dict(common), validate_params(spec, params))
    if hasattr(estimator, "to_inference"):
        if hasattr(estimator, "get_params"):
            known = estimator.get_params(deep=False)
            wanted = calibration.as_params()
            estimator.set_params(**{k: v for k, v in wanted.items() if k in known})
        servable: ServableEstimator = estimator
        return servable
    return CalibratedBoosting(
        estimator,
        method=calibration.method,
        split=calibration.split,
        calibration_fraction=calibration.fraction,
        n_folds=calibration.n_folds,
        random_state=common.get("random_state"),
    )


def trained_booster(estimator: Any) -> Any:
    """The fitted booster inside what :func:`build_estimator` returned (its facts:
    ``n_estimators_``, ``termination_reason_``): the wrapped one, or the estimator."""
    if isinstance(estimator, CalibratedBoosting):
        return estimator.estimator_
    return estimator
