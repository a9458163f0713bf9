"""Why a row got its score: the exact attribution of a served two-class score to features.

``explain(model, X)`` returns, per row, a ``bias`` and one contribution per feature whose
sum is the raw score the calibration map takes (the score the prediction log stores),
up to floating-point rounding, for the ensemble actually served:

* one booster (:class:`~models.inference.scorers.BinaryScorer`): its score;
* a fold ensemble (:class:`~models.inference.fold_ensemble.FoldEnsembleScorer`, what the
  default ``auto`` serves): the mean of the folds' scores; with vote fractions the merged
  ensemble it is served as, so the attribution covers the same learners and weights.

The score is the vote fraction ``s(x) = V(x) / A`` (Eq. 24 of Nikolaou et al. 2016, with
``V = sum_t alpha_t I(h_t(x) > 0)``, ``A = sum_t alpha_t``) or the logistic score
``s'(x) = expit(2 F(x))`` (Eq. 25, ``F = sum_t alpha_t h_t(x)``). The sums ``V`` and ``F``
are additive over the learners, and each layout splits every learner's term among
features (its ``explain``, :mod:`models.inference.layouts`):

* ``stumps`` (decision stumps and univariate logistic learners): the learner's whole term
  to its feature, measured from the mean of its two branch values;
* ``trees``: a path attribution (Saabas): along the row's path, ``value(child) -
  value(node)`` to the node's feature, the bias holding the roots' values. Each inner
  node's value is the mean of its children's, branches weighted equally, because the
  artifact keeps no per-node training counts; the sum is exact whatever the node values
  (the differences telescope). Exact TreeSHAP also needs those counts: not offered;
* ``oblique``: the learner's change from its answer at the training mean, shared in
  proportion to its linear split terms ``w_j (x_j - mu_j)``;
* ``linear``: the learner's term to its feature, measured from its intercept.

Vote fractions: bias and contributions of ``V`` divided by ``A``. Logistic scores:
those of ``F``, times the secant slope of ``expit(2 .)`` between the bias ``b`` and
``F``, ``(expit(2F) - expit(2b)) / (F - b)``; the bias is then ``expit(2b)`` (the
derivative stands in for the secant when ``|F - b| <``
:data:`~models.inference.ensemble.SECANT_MIN`, and the bias takes up the
difference). A fold ensemble of logistic scores averages its folds' attributions
(:meth:`Ensemble.explain_score <models.inference.ensemble.Ensemble.explain_score>`).

Multiclass models, models that decide without probabilities (the ``fixed`` rule) and
scorers or layouts without an attribution raise :class:`~models.exceptions.NotExplainable`
naming what cannot explain.

The expected-cost margin of a decision (:func:`cost_margin`) is the expected cost of the
second-best decision minus that of the chosen one (least expected cost): zero on a tie,
in the units of the costs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from models.exceptions import NotExplainable
from models.inference.model import InferenceModel, check_features

__all__ = ["Explanation", "check_explainable", "contributions", "cost_margin", "explain"]


@dataclass(frozen=True)
class Explanation:
    """Attribution of ``n`` rows' raw scores to ``d`` features.

    Attributes
    ----------
    bias : ndarray of shape (n,)
        The part of the score no feature accounts for (the learners' reference values).
    contributions : ndarray of shape (n, d)
        One column per feature, in the model's feature order.
    score : ndarray of shape (n,)
        The served raw score: ``bias + contributions.sum(axis=1)`` up to rounding.
    proba : ndarray of shape (n, 2)
        The probabilities the decision uses (calibrated, skew removed, priors applied).
    """

    bias: np.ndarray
    contributions: np.ndarray
    score: np.ndarray
    proba: np.ndarray


def check_explainable(model: InferenceModel) -> None:
    """Raise :class:`NotExplainable` (saying why) unless ``model`` can explain its scores.

    Layouts are checked when the learners are explained (an ensemble's layout without an
    attribution raises then)."""
    if model.n_classes != 2:
        raise NotExplainable(
            f"explanations are for two-class models; this model has {model.n_classes} classes"
        )
    if model.rule == "fixed":
        raise NotExplainable(
            "this model decides by its training costs without probabilities; its decisions "
            "have no score to explain"
        )
    if not hasattr(model.scorer, "explain_raw"):
        kind = getattr(model.scorer, "kind", type(model.scorer).__name__)
        algorithm = model.metadata.get("algorithm")
        named = f" (algorithm {algorithm!r})" if algorithm else ""
        raise NotExplainable(f"the {kind!r} scorer{named} has no exact attribution of its scores")


def contributions(model: InferenceModel, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(bias (n,), contributions (n, d))`` of the raw scores of checked rows ``X``."""
    check_explainable(model)
    return model.scorer.explain_raw(X)  # type: ignore[attr-defined, no-any-return]


def explain(
    model: InferenceModel, X: Any, priors: Any = None, *, validated: bool = False
) -> Explanation:
    """The attribution of ``X``'s raw scores and the probabilities they lead to.

    Raises
    ------
    NotExplainable
        Multiclass, ``fixed``-rule, or a scorer or layout without an attribution.
    """
    if not validated:
        X = check_features(X, model.n_features)
    bias, contrib = contributions(model, X)
    proba, raw = model.scored_proba(X, priors, validated=True)
    return Explanation(bias, contrib, np.asarray(raw, dtype=np.float64), proba)


def cost_margin(proba: np.ndarray, costs: np.ndarray) -> np.ndarray:
    """Per row: expected cost of the second-best decision minus the least one, ``>= 0``.

    ``costs`` is one ``(K, A)`` matrix or one per row ``(n, K, A)`` (rows: truth,
    columns: decisions); the expected cost of decision ``a`` is ``sum_i p_i C[i][a]``.
    """
    c = np.asarray(costs, dtype=np.float64)
    expected = proba @ c if c.ndim == 2 else np.einsum("ni,nia->na", proba, c)
    if expected.shape[1] < 2:
        return np.zeros(expected.shape[0])
    two = np.partition(expected, 1, axis=1)
    return two[:, 1] - two[:, 0]  # type: ignore[no-any-return]
