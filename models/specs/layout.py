"""One ensemble layout declared once: :class:`EnsembleLayout`.

A layout is how the learners of a boosted ensemble are stored as flat numeric arrays
(:class:`models.inference.ensemble.Ensemble`): which arrays, with which dtypes, how they
are checked when loaded, and how they evaluate to the learners' outputs and to the
alpha-weighted sums. An artifact names the layout of each ensemble it holds (its
``ensemble_kind``) and stores exactly the layout's arrays (one ``.npy`` each), so saving
and loading need nothing else. :mod:`models.inference.layouts` keeps the registry.

Callables (``ensemble`` is the :class:`~models.inference.ensemble.Ensemble`, ``X`` a
float64 matrix of raw values, NaN missing):

``prepare(alphas, arrays, n_features)``
    After the generic checks (exactly the declared arrays, 1-D, of their dtypes,
    finite floats; ``alphas`` finite and positive): the layout's own checks (shapes,
    index ranges), raising :class:`~models.exceptions.ArtifactError`; returns the data
    derived once for prediction (kept as ``ensemble._derived``).
``outputs(ensemble, X)``
    ``h_t(x)`` of every learner, shape ``(rows, M)``.
``sums(ensemble, X, tag)``, optional
    ``sum_t alpha_t h_t(x)`` (``tag="F"``) or ``sum_t alpha_t I(h_t(x) > 0)``
    (``"V"``), shape ``(rows,)``; without it the sums are taken over :func:`outputs`
    in row blocks, row by row in a fixed order.
``votes(ensemble, n_classes)``, optional
    For learners answering class indices: a callable ``(X, total)`` giving the class
    votes ``V_k(x) = sum_t alpha_t I(h_t(x) = k)`` (``total = 0``) or the vote
    fractions ``V / total`` clipped to [0, 1]; without it the votes are summed over
    :func:`outputs`. A fitted estimator holds what it returns, so it must pickle (an
    instance of a module-level class, not a closure).
``explain(ensemble, X, tag)``, optional
    The per-feature attribution of the sum of ``tag`` (``"F"`` or ``"V"``, as for
    ``sums``): ``(bias, contributions)``, a float and a ``(rows, n_features)`` array with
    ``bias + contributions.sum(axis=1)`` equal to that sum up to rounding
    (:mod:`models.inference.explanation`). Without it the layout cannot explain its
    scores (:class:`~models.exceptions.NotExplainable`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["EnsembleLayout"]


@dataclass(frozen=True)
class EnsembleLayout:
    """An ensemble layout (see the module docstring).

    Parameters
    ----------
    name : str
        The ``kind`` of the ensembles stored this way (``ensemble_kind`` in artifacts).
    description : str
        One line: what a learner of this layout is.
    arrays : mapping of str to numpy dtype
        The learner arrays (``alphas`` apart), each one-dimensional.
    prepare, outputs, sums, votes, explain : callables
        See the module docstring.
    offsets : str or None
        The name of an array of ``M + 1`` offsets into the others (learner ``t`` holds
        entries ``offsets[t]:offsets[t + 1]``, offsets local to the ensemble); None: every
        array holds an equal block per learner. Lets ensembles be cut after ``m``
        learners and concatenated without knowing the layout.
    class_arrays : tuple of str
        The arrays holding the learners' output values; those must be class indices for
        a multiclass vote. Empty: the layout has no class-valued learners.
    cuts : tuple of (str, str) or None
        ``(feature array, threshold array)`` where a learner (or node) sends ``x`` left
        iff ``x[feature] <= threshold`` (feature -1: no test): the only use of the
        value, so a model trained on pre-binned codes can be moved to raw values.
    """

    name: str
    description: str
    arrays: Mapping[str, Any]
    prepare: Callable[..., dict[str, Any]]
    outputs: Callable[..., Any]
    sums: Callable[..., Any] | None = None
    votes: Callable[..., Callable[[Any, float], Any]] | None = None
    offsets: str | None = None
    class_arrays: tuple[str, ...] = ()
    cuts: tuple[str, str] | None = None
    explain: Callable[..., tuple[float, Any]] | None = None
