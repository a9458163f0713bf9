"""An estimator's parameters declared once, as a table: :func:`declared_init`.

scikit-learn reads an estimator's parameters from the signature of its ``__init__``
(``BaseEstimator._get_param_names``, which refuses ``*args``) and asks that ``__init__``
store each argument unchanged under its own name and do nothing else (checks happen in
``fit``). The boosters share long runs of the same parameters (rounds, weak learner,
depth, bins, score, seed), so each family declares its run once as an ordered mapping of
names to defaults, and a variant's ``__init__`` is built from the runs it takes plus its
own parameters::

    BOOSTING_PARAMS = {"n_estimators": 100, "weak_learner": "stump", ...}

    class CostSensitiveBoosting(BaseBoosting):
        __init__ = declared_init({"c_fp": 1.0, "c_fn": 1.0}, BOOSTING_PARAMS)

The built ``__init__`` carries a real :class:`inspect.Signature` (positional or keyword,
in the declared order), so ``get_params``, ``set_params``, ``clone``, ``repr`` and
``help()`` see the same parameters a hand-written ``__init__`` would give them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["declared_init", "declared_params"]

_KIND = inspect.Parameter.POSITIONAL_OR_KEYWORD


def declared_init(*runs: Mapping[str, Any], **params: Any) -> Callable[..., None]:
    """An ``__init__`` taking the parameters of ``runs`` and then ``params``, in order.

    Parameters
    ----------
    *runs : mapping of str to object
        Ordered runs of parameter names and their defaults.
    **params : object
        Further parameters and their defaults, after the runs.

    Returns
    -------
    callable
        ``__init__(self, ...)`` that binds its arguments to the declared signature (a
        ``TypeError`` for an unknown or repeated one, like any Python call) and sets each
        parameter, given or default, as an attribute of the same name.

    Raises
    ------
    TypeError
        If a name is declared twice.
    """
    table: dict[str, Any] = {}
    for run in (*runs, params):
        for name, default in run.items():
            if name in table:
                raise TypeError(f"parameter {name!r} is declared twice")
            table[name] = default
    signature = inspect.Signature(
        [inspect.Parameter("self", _KIND)]
        + [inspect.Parameter(name, _KIND, default=default) for name, default in table.items()]
    )

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        for name in table:
            setattr(self, name, bound.arguments[name])

    __init__.__signature__ = signature  # type: ignore[attr-defined]
    return __init__


def declared_params(cls: type) -> dict[str, Any]:
    """The parameters of ``cls.__init__`` and their defaults, in order (a run to extend)."""
    return {p.name: p.default for p in inspect.signature(cls).parameters.values()}
