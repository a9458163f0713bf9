"""Fold ensembles: the k cross-fitting boosters served together, numpy only.

Cross-fitted calibration (:mod:`models.boosting.crossfit`) fits one booster per fold and fits the
calibration map on the out-of-fold scores: the score of each row comes from the fold
booster that did not see it. The automatic capacity search (:mod:`models.auto`) already
fits those k boosters. Instead of refitting one more booster on all rows and applying
the map to *its* scores (a booster the map never saw, fitted on 5/4 as many rows, whose
scores are distributed differently), a fold ensemble serves the k fold boosters:

    s(x) = (1 / k) sum_i s_i(x),        P(y = 1 | x) = g(s(x))

with ``s_i`` the raw score of fold booster i (the vote fraction, Eq. 24 of Nikolaou et
al. 2016, or the logistic score, Eq. 25) and ``g`` the one calibration map fitted on the
pooled out-of-fold scores ``s_{fold(j)}(x_j)``. Every ``s_i(x)`` of a new row is a score
of a booster that did not see the row, like the scores ``g`` was fitted on; their mean
is the same quantity with the fold-to-fold noise averaged out.

Why the mean of the scores and not the mean of the calibrated fold probabilities
``(1 / k) sum_i g(s_i(x))`` (scikit-learn's ``CalibratedClassifierCV(ensemble=True)``,
there with one map per fold): measured on the 29 two-class tasks of
``bench/quality/baselines.py`` (3 seeds, in process: ``bench/quality/fold_ensemble.py``,
results in ``bench/results/fold-ensemble-2026-11-25.md``), geometric mean of cost /
best baseline 1.032 for the mean of the scores, 1.058 for the mean of the calibrated
probabilities, 1.194 with one map per fold (each fitted on one fold's rows only) and
1.100 for the booster refitted on all rows (the former default). The
vote fraction of a few rounds takes few values; the mean over k boosters orders the
rows more finely before the map is applied.

The raw score the calibrator takes is thus one number per row, the mean fold score
(:meth:`FoldEnsembleScorer.raw_score`): the prediction log stores it and recalibration
fits a new map on it, exactly as for one booster.

Predictions are batch-invariant to the last bit: the mean vote fraction is the vote
fraction of one merged ensemble (:func:`merged_votes`, summed row by row in a fixed
order like any ensemble), the mean logistic score sums the folds in fold order, and the
map is elementwise. One request scores the merged ensemble in one pass, so a 5-fold
model costs much less than 5 boosters' calls.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from models.calibration.calibrators import Calibrator
from models.exceptions import ArtifactError
from models.inference.ensemble import Ensemble
from models.inference.multiclass_scorers import raw_vote_scores
from models.inference.scorers import (
    CalibratedBinaryScorer,
    binary_spec,
    join_arrays,
    split_arrays,
)
from models.inference.vote_ensemble import VoteEnsemble

__all__ = [
    "FoldBoosters",
    "FoldEnsembleScorer",
    "FoldVoteBoosters",
    "MAX_FOLDS",
    "merged_votes",
    "truncated",
]

MAX_FOLDS = 20
"""Most fold boosters an artifact may hold."""


def truncated(ensemble: Ensemble, rounds: int) -> Ensemble:
    """The first ``rounds`` weak learners of ``ensemble`` (all of them if it has fewer).

    Boosting is sequential, so this is the booster the same fit would have returned
    with ``n_estimators=rounds``: what the staged scores of the capacity search scored.
    """
    m = min(int(rounds), ensemble.n_learners)
    if m < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds!r}")
    if m == ensemble.n_learners:
        return ensemble
    arrays = ensemble.to_arrays()
    alphas = arrays.pop("alphas")[:m]
    offsets_name = ensemble.layout.offsets
    if offsets_name is not None:  # learners of their own sizes (trees' nodes)
        offsets = arrays.pop(offsets_name)[: m + 1]
        end = int(offsets[-1])
        out = {k: v[:end] for k, v in arrays.items()}
        out[offsets_name] = offsets
    else:  # per-learner blocks of equal size (1 entry, or R, R x d, d for oblique)
        n = ensemble.n_learners
        out = {k: v[: m * (v.size // n)] for k, v in arrays.items()}
    return Ensemble.from_arrays({"alphas": alphas, **out}, ensemble.kind, ensemble.n_features)


def merged_votes(ensembles: tuple[Ensemble, ...]) -> Ensemble:
    """One ensemble whose vote fraction is the mean of the ``ensembles``' vote fractions.

    With ``A_i`` the sum of fold i's weights, ``(1/k) sum_i V_i(x) / A_i`` is the vote
    fraction of all learners together weighted ``alpha_t / (k A_i)``; the learners'
    arrays are concatenated (tree nodes keep their tree-local child indices, a layout's
    offsets are shifted). All ensembles must be of one kind.
    """
    k = len(ensembles)
    kind = ensembles[0].kind
    offsets = ensembles[0].layout.offsets  # trees: "tree_offsets", shifted per fold
    parts = [e.to_arrays() for e in ensembles]
    alphas = np.concatenate([p["alphas"] / (k * float(p["alphas"].sum())) for p in parts])
    names = [n for n in parts[0] if n not in ("alphas", offsets)]
    arrays = {n: np.concatenate([p[n] for p in parts]) for n in names}
    if offsets is not None:
        starts = np.cumsum([0] + [int(p[offsets][-1]) for p in parts])
        arrays[offsets] = np.concatenate(
            [p[offsets][:-1] + starts[i] for i, p in enumerate(parts)] + [starts[-1:]]
        ).astype(np.int64)
    return Ensemble.from_arrays(
        {"alphas": alphas, **arrays}, kind=kind, n_features=int(ensembles[0].n_features)
    )


@dataclass(frozen=True)
class FoldEnsembleScorer(CalibratedBinaryScorer):
    """k boosted ensembles (one per cross-fitting fold), a raw score and one shared map.

    Parameters
    ----------
    ensembles : tuple of Ensemble
        The fold boosters, in fold order (2 to :data:`MAX_FOLDS`).
    score_kind : {"vote", "logistic"}
        s(x) (Eq. 24) or s'(x) (Eq. 25) of Nikolaou et al., per fold booster.
    calibrator : Calibrator
        The map fitted on the pooled out-of-fold scores, applied to the mean fold score.
    """

    kind: ClassVar[str] = "binary_folds"
    ensembles: tuple[Ensemble, ...]
    score_kind: str
    calibrator: Calibrator

    _merged: Ensemble | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not 2 <= len(self.ensembles) <= MAX_FOLDS:
            raise ArtifactError(
                f"a fold ensemble holds 2 to {MAX_FOLDS} boosters, got {len(self.ensembles)}"
            )
        if len({int(e.n_features) for e in self.ensembles}) != 1:
            raise ArtifactError("the fold boosters must expect the same number of features")
        merged = None
        if self.score_kind == "vote" and len({e.kind for e in self.ensembles}) == 1:
            merged = merged_votes(self.ensembles)
        object.__setattr__(self, "_merged", merged)

    @property
    def n_features(self) -> int:
        return int(self.ensembles[0].n_features)

    @property
    def n_folds(self) -> int:
        return len(self.ensembles)

    def raw_score(self, X: np.ndarray) -> np.ndarray:
        """The score the calibrator takes, shape (n,): the mean of the k fold scores.

        Vote fractions: one pass over the merged ensemble (:func:`merged_votes`), whose
        vote fraction is that mean (up to rounding), at about the cost of one booster
        with k times the learners rather than k boosters. Logistic scores: fold by fold.
        """
        if self._merged is not None:
            return self._merged.vote_fraction(X)
        total = self.ensembles[0].score(X, self.score_kind)
        for ens in self.ensembles[1:]:
            total = total + ens.score(X, self.score_kind)
        return total / len(self.ensembles)

    def explain_raw(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(bias (n,), contributions (n, d))`` of :meth:`raw_score`: of the merged
        ensemble it scores (vote fractions), else the mean of the folds' attributions
        (:mod:`models.inference.explanation`)."""
        if self._merged is not None:
            return self._merged.explain_score(X, "vote")
        parts = [e.explain_score(X, self.score_kind) for e in self.ensembles]
        k = len(parts)
        bias = parts[0][0]
        contrib = parts[0][1]
        for b, c in parts[1:]:
            bias = bias + b
            contrib = contrib + c
        return bias / k, contrib / k

    def with_calibrator(self, calibrator: Calibrator) -> FoldEnsembleScorer:
        """The same boosters (the same arrays, not copies) with another calibration map."""
        return FoldEnsembleScorer(self.ensembles, self.score_kind, calibrator)

    def to_parts(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        spec = {
            "n_folds": self.n_folds,
            "ensemble_kinds": [e.kind for e in self.ensembles],
            "score_kind": self.score_kind,
            "calibrator": self.calibrator.to_state(),
        }
        arrays: dict[str, np.ndarray] = {}
        for i, e in enumerate(self.ensembles):
            arrays.update(split_arrays(f"fold{i}", e))
        return spec, arrays

    @classmethod
    def from_parts(
        cls, spec: dict[str, Any], arrays: dict[str, np.ndarray], n_features: int
    ) -> FoldEnsembleScorer:
        score_kind, calibrator = binary_spec(spec)
        k = spec.get("n_folds")
        kinds = spec.get("ensemble_kinds")
        if isinstance(k, bool) or not isinstance(k, int) or not 2 <= k <= MAX_FOLDS:
            raise ArtifactError(f"n_folds must be an integer in [2, {MAX_FOLDS}], got {k!r}")
        if not isinstance(kinds, list) or len(kinds) != k:
            raise ArtifactError("ensemble_kinds must list one ensemble kind per fold")
        known = {f"fold{i}" for i in range(k)}
        stray = sorted({name.split("/", 1)[0] for name in arrays} - known)
        if stray:
            raise ArtifactError(f"unexpected arrays for {stray} in a {k}-fold ensemble")
        ensembles = tuple(join_arrays(f"fold{i}", arrays, kinds[i], n_features) for i in range(k))
        return cls(ensembles, score_kind, calibrator)


def _reasons(boosters: list[Any], truncated_to: tuple[Ensemble, ...]) -> tuple[str, ...]:
    """Each fold booster's termination reason, ``"max_rounds"`` where it was truncated."""
    return tuple(
        "max_rounds" if e.n_learners < b.ensemble_.n_learners else str(b.termination_reason_)
        for b, e in zip(boosters, truncated_to, strict=True)
    )


@dataclass(frozen=True)
class FoldBoosters:
    """The fitted fold boosters a fold ensemble serves, with the facts of one booster.

    ``n_estimators_`` is the largest fold's round count (every fold booster is truncated
    to the chosen rounds; one that stopped early has fewer) and ``termination_reason_``
    the folds' reasons, joined when they differ.
    """

    ensembles: tuple[Ensemble, ...]
    score_kind: str
    reasons: tuple[str, ...]

    @classmethod
    def from_boosters(cls, boosters: list[Any], rounds: int) -> FoldBoosters:
        ensembles = tuple(truncated(b.ensemble_, rounds) for b in boosters)
        return cls(ensembles, str(boosters[0].score_kind), _reasons(boosters, ensembles))

    @property
    def n_estimators_(self) -> int:
        return max(e.n_learners for e in self.ensembles)

    @property
    def termination_reason_(self) -> str:
        return ",".join(sorted(set(self.reasons)))

    def scorer(self, calibrator: Calibrator) -> FoldEnsembleScorer:
        return FoldEnsembleScorer(self.ensembles, self.score_kind, calibrator)


@dataclass(frozen=True)
class FoldVoteBoosters:
    """The k SAMME fold boosters of a multiclass fold ensemble, merged into one.

    More than two classes, vote fractions (``score_kind="vote"``): the mean of the k fold
    boosters' vote fractions ``(1/k) sum_i V_i(x) / B_i`` (``B_i`` the sum of fold i's
    weights) is the vote fraction of all their learners together weighted
    ``beta_m / (k B_i)`` (:func:`merged_votes`), so the fold ensemble is served as one
    :class:`~models.inference.vote_ensemble.VoteEnsemble` by the usual SAMME scorer:
    the artifact format does not change. The multinomial map, fitted on the pooled
    out-of-fold vote fractions, is applied to that mean, as for two classes.

    Has the attributes a served booster is read for: ``ensemble_``, ``score_kind``,
    ``n_estimators_`` (the largest fold's round count), ``termination_reason_`` and
    :meth:`score_samples`.
    """

    ensemble_: Any
    score_kind: str
    n_folds: int
    fold_rounds: tuple[int, ...]
    reasons: tuple[str, ...]
    n_features_in_: int

    @classmethod
    def from_boosters(cls, boosters: list[Any], rounds: int) -> FoldVoteBoosters:
        if str(boosters[0].score_kind) != "vote":
            raise ValueError("a multiclass fold ensemble merges vote fractions only")
        cores = tuple(truncated(b.ensemble_.ensemble, rounds) for b in boosters)
        k_classes = int(boosters[0].ensemble_.n_classes)
        merged = VoteEnsemble(merged_votes(cores), k_classes)
        out = cls(
            merged,
            "vote",
            len(boosters),
            tuple(e.n_learners for e in cores),
            _reasons(boosters, cores),
            int(boosters[0].n_features_in_),
        )
        names = getattr(boosters[0], "feature_names_in_", None)
        if names is not None:  # validated like the fold boosters' input
            object.__setattr__(out, "feature_names_in_", names)
        return out

    @property
    def n_estimators_(self) -> int:
        return max(self.fold_rounds)

    @property
    def termination_reason_(self) -> str:
        return ",".join(sorted(set(self.reasons)))

    def score_samples(self, X: Any) -> np.ndarray:
        """The mean of the fold boosters' vote fractions, shape (n, K)."""
        from models.features.checks import check_predict_X  # scikit-learn: not on load

        return raw_vote_scores(self.ensemble_, check_predict_X(self, X), "vote")
