"""Training from a pre-binned (uint8) matrix and mapping the model back to raw values.

A data set too large for float64 is binned while it is read
(:class:`models.features.binning.ReservoirSample`, :class:`models.features.binning.BinEdges`,
:class:`models.features.binning.BinnedRows`: one byte per cell). :func:`fit_prebinned` fits an
estimator on those codes inside :func:`models.features.binning.prebinned`, so that no float copy
of the matrix is made, and :func:`raw_space` rewrites every split of the fitted stumps
or trees from code space (``code <= k``, cut point ``k + 0.5``) to raw feature values
(``x <= cuts[k]``). The two are the same test for every value (``code = #{cuts < x}``),
so the served model gives exactly the scores that were measured during the fit, and
missing values keep the direction each split learned (code 255 is the missing bin).

Supported: binary boosters whose weak learners are stumps or histogram trees (the
default ``auto`` model, AdaBoost and its calibrated forms). Linear weak learners
(outputs that depend on the value, not only on its bin) and multiclass scorers are
refused (:class:`~models.exceptions.InvalidInput`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from models.exceptions import InvalidInput
from models.features.binning import BinEdges, prebinned
from models.inference.ensemble import Ensemble
from models.inference.fold_ensemble import FoldEnsembleScorer
from models.inference.model import InferenceModel
from models.inference.scorers import BinaryScorer

__all__ = ["fit_prebinned", "raw_space", "raw_space_model"]


def fit_prebinned(
    estimator: Any, codes: np.ndarray, y: np.ndarray, edges: BinEdges, **fit_params: Any
) -> Any:
    """``estimator.fit(codes, y)`` in code space (see the module docstring).

    ``codes`` is a (rows, features) uint8 matrix from :meth:`BinEdges.encode`, ideally a
    :class:`~models.features.binning.BinnedRows` (row subsets stay feature-major, no copies).
    Convert the result with :func:`raw_space_model` before serving it.
    """
    if getattr(codes, "dtype", None) != np.uint8:
        raise InvalidInput("pre-binned codes must be a uint8 matrix")
    with prebinned(edges):
        return estimator.fit(codes, y, **fit_params)


def raw_space(ensemble: Ensemble, edges: BinEdges) -> Ensemble:
    """The same ensemble with its cut points ``k + 0.5`` replaced by ``edges`` values.

    Raises InvalidInput for layouts without cut points (``EnsembleLayout.cuts``: linear
    and oblique learners' outputs depend on the value, not only on its bin).
    """
    if ensemble.n_features != edges.n_features:
        raise InvalidInput(f"ensemble has {ensemble.n_features} features, edges {edges.n_features}")
    arrays = dict(ensemble.arrays)
    if ensemble.layout.cuts is None:
        raise InvalidInput(
            f"a pre-binned model cannot hold {ensemble.kind} weak learners (stumps or trees)"
        )
    feature, threshold = ensemble.layout.cuts
    feat = arrays[feature]
    split = feat >= 0  # trees: -1 at a leaf
    thr = arrays[threshold].copy()
    thr[split] = _raw_cuts(feat[split], thr[split], edges)
    arrays[threshold] = thr
    return Ensemble(ensemble.kind, ensemble.alphas, arrays, ensemble.n_features)


def _raw_cuts(features: np.ndarray, code_cuts: np.ndarray, edges: BinEdges) -> np.ndarray:
    """``cuts[j, floor(t)]`` for each (feature j, code-space cut t).

    Codes are integers, so ``code <= t`` iff ``code <= floor(t)`` iff ``x <= cuts[floor(t)]``
    for any cut ``t``. A cut at or past the last value bin (e.g. a constant learner's
    placeholder) becomes the largest float (every value goes left, as every code did);
    one below code 0 the smallest (every value goes right).
    """
    j = np.asarray(features, dtype=np.intp)
    t = np.floor(np.asarray(code_cuts, dtype=np.float64))
    n = edges.n_thresholds[j]
    big = np.finfo(np.float64).max
    out = np.full(j.shape, big)
    out[t < 0] = -big
    inside = (t >= 0) & (t < n)
    out[inside] = edges.thresholds[j[inside], t[inside].astype(np.intp)]
    return out


def raw_space_model(model: InferenceModel, edges: BinEdges) -> InferenceModel:
    """An inference model trained in code space, mapped to raw values (:func:`raw_space`)."""
    scorer = model.scorer
    raw: BinaryScorer | FoldEnsembleScorer
    if isinstance(scorer, BinaryScorer):
        raw = dataclasses.replace(scorer, ensemble=raw_space(scorer.ensemble, edges))
    elif isinstance(scorer, FoldEnsembleScorer):  # the default's fold boosters, each mapped
        raw = dataclasses.replace(
            scorer, ensembles=tuple(raw_space(e, edges) for e in scorer.ensembles)
        )
    else:
        raise InvalidInput(
            "pre-binned training supports binary models (one boosted ensemble or a fold "
            f"ensemble); got a {getattr(scorer, 'kind', type(scorer).__name__)} scorer"
        )
    return dataclasses.replace(model, scorer=raw)
