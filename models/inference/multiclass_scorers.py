"""Scorer kinds of the multiclass models (numpy only; registered on import).

``"ovr"`` -- :class:`OneVsRestScorer`
    One calibrated binary scorer per class (``P(y = k | x)`` of class ``k`` against the
    rest), normalised so that each row sums to one.
``"samme"`` -- :class:`CalibratedVoteScorer`
    A :class:`~models.inference.vote_ensemble.VoteEnsemble` (SAMME), its raw class
    scores (vote fractions or softmax of the votes) and either one calibration map per
    class, normalised so that each row sums to one, or one softmax map of all K scores
    (:class:`~models.calibration.multinomial.MultinomialCalibrator`, spec key
    ``"joint_calibrator"``; ``"calibrators"`` is then empty).
``"angle"`` -- :class:`AngleScorer`
    An angle-based model: ``decide_fixed`` applies the least-angle rule (served with the
    ``"fixed"`` rule of :mod:`models.inference.model`); ``proba`` is the paper's plug-in estimate
    (Theorem 2, Eq. 13), which is not calibrated.

Normalisation of the calibrated scorers: ``p_k / sum_j p_j``; a row whose calibrated
values are all 0 becomes uniform (Zadrozny and Elkan 2002 normalise the same way).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from models.calibration.calibrators import Calibrator, calibrator_from_state, make_calibrator
from models.calibration.multinomial import MultinomialCalibrator
from models.decisions.training_costs import check_cost_matrix
from models.exceptions import ArtifactError, InvalidInput
from models.inference.scorers import BinaryScorer, TwoStepScorer, join_arrays, split_arrays
from models.inference.simplex import scores_from_votes
from models.inference.vote_ensemble import VoteEnsemble

__all__ = [
    "AngleScorer",
    "CalibratedVoteScorer",
    "OneVsRestScorer",
    "fit_class_maps",
    "normalise_rows",
    "raw_vote_scores",
    "theorem2_probabilities",
]

LOSSES = ("exponential", "logit")
VOTE_SCORES = ("vote", "logistic")


def normalise_rows(p: np.ndarray) -> np.ndarray:
    """Rows divided by their sums; all-zero rows become uniform."""
    p = np.clip(p, 0.0, None)
    total = p.sum(axis=1, keepdims=True)
    k = p.shape[1]
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(total > 0, p / np.where(total > 0, total, 1.0), 1.0 / k)
    return out


def fit_class_maps(
    method: str, raw: np.ndarray, y_index: np.ndarray, sample_weight: np.ndarray | None = None
) -> tuple[Calibrator, ...]:
    """One binary calibration map per class: class ``k``'s raw score ``raw[:, k]`` against
    ``y == k`` (Zadrozny and Elkan 2002); ``method`` as :func:`models.calibration.calibrators.make_calibrator`.
    """
    return tuple(
        make_calibrator(method).fit(raw[:, k], (y_index == k).astype(np.int8), sample_weight)
        for k in range(raw.shape[1])
    )


def _apply_class_maps(calibrators: tuple[Calibrator, ...], raw: np.ndarray) -> np.ndarray:
    return normalise_rows(
        np.column_stack([c.predict(raw[:, k]) for k, c in enumerate(calibrators)])
    )


def raw_vote_scores(ensemble: VoteEnsemble, X: np.ndarray, score_kind: str) -> np.ndarray:
    """Uncalibrated class scores: vote fractions (``"vote"``) or ``softmax(V)``."""
    if score_kind == "vote":
        return ensemble.vote_fractions(X)
    v = ensemble.votes(X)
    z = np.exp(v - v.max(axis=1, keepdims=True))
    return z / z.sum(axis=1, keepdims=True)


def theorem2_probabilities(scores: np.ndarray, costs: np.ndarray, loss: str) -> np.ndarray:
    """Plug-in class probabilities of Theorem 2 (Eq. 13) from scores ``<f(x), w_k>``.

    ``p = (C^T)^{-1} l* / (1^T (C^T)^{-1} l*)`` with ``l*_k = 1 / l'(-<f, w_k>)``:
    ``-exp(-s_k)`` (exponential loss) or ``-(1 + exp(-s_k))`` (logit loss). For 0-1 costs
    this is Eq. 14. Valid for the population minimiser; for a fitted ``f`` the formula can
    leave [0, 1], so negative values are clipped to 0 and rows renormalised. These are not
    calibrated probabilities.

    Raises
    ------
    InvalidInput
        If ``costs`` is not invertible (condition number above 1e12).

    References
    ----------
    Yang, Guo and Chang (2020), Theorem 2, Eqs. 11-14 and section 3.2.
    """
    if loss not in LOSSES:
        raise InvalidInput(f"loss must be one of {LOSSES}, got {loss!r}")
    if not np.linalg.cond(costs) < 1e12:
        raise InvalidInput(
            "class probabilities of Theorem 2 (Eq. 13) need an invertible training cost "
            "matrix; this one is singular (decisions are still available)"
        )
    s_min = scores.min(axis=1, keepdims=True)
    if loss == "exponential":  # l* up to a positive factor per row (cancels in Eq. 13)
        ell = -np.exp(s_min - scores)
    else:
        ell = -np.exp(np.logaddexp(0.0, -scores) - np.logaddexp(0.0, -s_min))
    q = ell @ np.linalg.inv(costs)  # rows of ((C^T)^{-1} l*)^T
    with np.errstate(invalid="ignore", divide="ignore"):
        p = q / q.sum(axis=1, keepdims=True)
    p = np.where(np.isfinite(p), p, 0.0)
    return normalise_rows(p)


class _OnVotes:
    """The sizes of a scorer over one :class:`VoteEnsemble` ``ensemble``."""

    ensemble: VoteEnsemble

    @property
    def n_features(self) -> int:
        return self.ensemble.n_features

    @property
    def n_classes(self) -> int:
        return self.ensemble.n_classes


def _ensemble_spec(ensemble: VoteEnsemble) -> dict[str, Any]:
    return {"ensemble_kind": ensemble.ensemble.kind, "n_classes": ensemble.n_classes}


def _join_votes(
    spec: dict[str, Any],
    arrays: dict[str, np.ndarray],
    n_features: int,
    kind: tuple[str, Collection[str], str],
) -> VoteEnsemble:
    """The vote ensemble of a scorer's parts; ``kind`` is (key, known values, what the
    error calls it): the spec's ``key`` must be one of the known values."""
    key, known, what = kind
    if spec.get(key) not in known:
        raise ArtifactError(f"unknown {what} {spec.get(key)!r}")
    k = spec.get("n_classes")
    if isinstance(k, bool) or not isinstance(k, int) or k < 2:
        raise ArtifactError(f"scorer n_classes must be an integer >= 2, got {k!r}")
    ens = join_arrays("ensemble", arrays, spec.get("ensemble_kind"), n_features)
    return VoteEnsemble(ens, k)


@dataclass(frozen=True)
class AngleScorer(_OnVotes):
    """Angle-based model: least-angle decisions, Theorem 2 plug-in probabilities.

    Parameters
    ----------
    ensemble : VoteEnsemble
        Learners ``Phi_m`` and steps ``beta_m``.
    loss : {"exponential", "logit"}
        Algorithm 1 or Algorithm 2 (for the link of Theorem 2).
    cost_matrix : ndarray of shape (K, K)
        The training cost matrix.

    References
    ----------
    Yang, Guo and Chang (2020), section 2.2 (least-angle rule), Theorem 2 (Eq. 13).
    """

    kind: ClassVar[str] = "angle"
    ensemble: VoteEnsemble
    loss: str
    cost_matrix: np.ndarray

    def scores(self, X: np.ndarray) -> np.ndarray:
        """``<f(x), w_k>``, shape (n, K)."""
        return scores_from_votes(self.ensemble.votes(X), self.ensemble.total)

    def decide_fixed(self, X: np.ndarray) -> np.ndarray:
        """Least-angle rule ``argmax_k <f(x), w_k>`` (ties: lower index), shape (n,)."""
        return np.argmax(self.ensemble.votes(X), axis=1).astype(np.int64)

    def proba(self, X: np.ndarray) -> np.ndarray:
        """Theorem 2 plug-in probabilities (:func:`theorem2_probabilities`); not calibrated."""
        return theorem2_probabilities(self.scores(X), self.cost_matrix, self.loss)

    def to_parts(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        spec = {**_ensemble_spec(self.ensemble), "loss": self.loss}
        arrays = split_arrays("ensemble", self.ensemble.ensemble)
        arrays["cost_matrix"] = np.asarray(self.cost_matrix, dtype=np.float64)
        return spec, arrays

    @classmethod
    def from_parts(
        cls, spec: dict[str, Any], arrays: dict[str, np.ndarray], n_features: int
    ) -> AngleScorer:
        ens = _join_votes(spec, arrays, n_features, ("loss", LOSSES, "angle-based loss"))
        if "cost_matrix" not in arrays:
            raise ArtifactError("angle scorer needs a 'cost_matrix' array")
        try:
            costs = check_cost_matrix(arrays["cost_matrix"], ens.n_classes)
        except InvalidInput as exc:
            raise ArtifactError(f"angle scorer: {exc}") from None
        return cls(ens, spec["loss"], costs)


@dataclass(frozen=True)
class CalibratedVoteScorer(_OnVotes, TwoStepScorer):
    """SAMME votes, raw class scores and one calibration map per class, normalised.

    Parameters
    ----------
    ensemble : VoteEnsemble
        The SAMME learners and weights ``alpha^{(m)}``.
    score_kind : {"vote", "logistic"}
        Raw scores: vote fractions or softmax of the votes (:mod:`models.multiclass.samme`).
    calibrators : tuple of Calibrator
        Map of class ``k``'s raw score to ``P(y = k | x)`` (before normalisation); empty
        when ``joint`` calibrates.
    joint : MultinomialCalibrator or None
        One softmax map of all K raw scores
        (:mod:`models.calibration.multinomial`) instead of per-class maps.

    References
    ----------
    Zhu et al. (2009), Algorithm 2; B. Zadrozny, C. Elkan, "Transforming classifier
    scores into accurate multiclass probability estimates", KDD 2002 (per-class
    calibration, then normalisation).
    """

    kind: ClassVar[str] = "samme"
    ensemble: VoteEnsemble
    score_kind: str
    calibrators: tuple[Calibrator, ...]
    joint: MultinomialCalibrator | None = None

    def __post_init__(self) -> None:
        if self.joint is None and len(self.calibrators) != self.ensemble.n_classes:
            raise ArtifactError(
                f"expected {self.ensemble.n_classes} calibrators (one per class), "
                f"got {len(self.calibrators)}"
            )
        if self.joint is not None and (
            self.calibrators or self.joint.W_.shape[0] != self.ensemble.n_classes
        ):
            raise ArtifactError(
                "a multinomial calibrator replaces the per-class ones and needs one "
                f"weight row per class ({self.ensemble.n_classes})"
            )

    def raw_score(self, X: np.ndarray) -> np.ndarray:
        """The scores the calibration map takes, shape (n, K)."""
        return raw_vote_scores(self.ensemble, X, self.score_kind)

    def proba_from_raw(self, raw: np.ndarray) -> np.ndarray:
        """Class probabilities from :meth:`raw_score` (``proba(X)`` in two steps)."""
        if self.joint is not None:
            return self.joint.predict_proba(raw)
        return _apply_class_maps(self.calibrators, raw)

    def refit_calibration(
        self, method: str, raw: np.ndarray, y_index: np.ndarray
    ) -> CalibratedVoteScorer:
        """The same ensemble (the same arrays) with calibration fitted anew on the raw
        scores ``raw`` (n, K) of labelled rows (recalibration, :mod:`models.feedback.recalibration`):
        ``"multinomial"`` one softmax map of the K scores (the parent's form and ridge when
        it has one, else the default of :mod:`models.auto`), ``"platt"``/``"isotonic"``
        one map per class, normalised."""
        if method == "multinomial":
            form, l2 = ("full", 0.1) if self.joint is None else (self.joint.form, self.joint.l2)
            joint = MultinomialCalibrator(form, l2).fit(raw, y_index)
            return CalibratedVoteScorer(self.ensemble, self.score_kind, (), joint)
        return CalibratedVoteScorer(
            self.ensemble, self.score_kind, fit_class_maps(method, raw, y_index)
        )

    def to_parts(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        spec: dict[str, Any] = {
            **_ensemble_spec(self.ensemble),
            "score_kind": self.score_kind,
            "calibrators": [c.to_state() for c in self.calibrators],
        }
        if self.joint is not None:  # optional key: artifacts without it read as before
            spec["joint_calibrator"] = self.joint.to_state()
        return spec, split_arrays("ensemble", self.ensemble.ensemble)

    @classmethod
    def from_parts(
        cls, spec: dict[str, Any], arrays: dict[str, np.ndarray], n_features: int
    ) -> CalibratedVoteScorer:
        ens = _join_votes(spec, arrays, n_features, ("score_kind", VOTE_SCORES, "score_kind"))
        states = spec.get("calibrators")
        if "joint_calibrator" in spec:
            if states != []:
                raise ArtifactError("a joint calibrator needs an empty 'calibrators' list")
            joint = MultinomialCalibrator.from_state(spec["joint_calibrator"], ens.n_classes)
            return cls(ens, spec["score_kind"], (), joint)
        if not isinstance(states, list) or len(states) != ens.n_classes:
            raise ArtifactError(f"expected {ens.n_classes} calibrator states, one per class")
        if not all(isinstance(s, dict) for s in states):
            raise ArtifactError("calibrator states must be JSON objects")
        return cls(ens, spec["score_kind"], tuple(calibrator_from_state(s) for s in states))


@dataclass(frozen=True)
class OneVsRestScorer(TwoStepScorer):
    """One calibrated binary scorer per class (class ``k`` against the rest), normalised.

    Parameters
    ----------
    members : tuple of BinaryScorer
        Member ``k`` gives ``P(y = k | x)`` in its column 1.

    References
    ----------
    Nikolaou et al. (2016), section 4 (calibrated AdaBoost) applied per class;
    Zadrozny and Elkan (2002), one-vs-rest calibration and normalisation.
    """

    kind: ClassVar[str] = "ovr"
    members: tuple[BinaryScorer, ...]

    def __post_init__(self) -> None:
        if len(self.members) < 2:
            raise ArtifactError("a one-vs-rest scorer needs at least two members")
        if len({m.n_features for m in self.members}) != 1:
            raise ArtifactError("one-vs-rest members disagree on the number of features")

    @property
    def n_features(self) -> int:
        return self.members[0].n_features

    @property
    def n_classes(self) -> int:
        return len(self.members)

    @property
    def calibrators(self) -> tuple[Calibrator, ...]:
        """The members' calibration maps, in class order."""
        return tuple(m.calibrator for m in self.members)

    def raw_score(self, X: np.ndarray) -> np.ndarray:
        """The members' raw scores (what their calibration maps take), shape (n, K)."""
        return np.column_stack([m.raw_score(X) for m in self.members])

    def proba_from_raw(self, raw: np.ndarray) -> np.ndarray:
        """Class probabilities from :meth:`raw_score` (``proba(X)`` in two steps)."""
        return _apply_class_maps(self.calibrators, raw)

    def refit_calibration(
        self, method: str, raw: np.ndarray, y_index: np.ndarray
    ) -> OneVsRestScorer:
        """The same members' ensembles (the same arrays) with their calibration maps fitted
        anew on the raw scores ``raw`` (n, K) of labelled rows (class ``k`` against the rest)."""
        if method == "multinomial":
            raise InvalidInput(
                "method: 'multinomial' refits SAMME's softmax map; a one-vs-rest model's "
                "members each have their own map: use 'platt' or 'isotonic'"
            )
        maps = fit_class_maps(method, raw, y_index)
        return OneVsRestScorer(
            tuple(m.with_calibrator(c) for m, c in zip(self.members, maps, strict=True))
        )

    def to_parts(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        specs: list[dict[str, Any]] = []
        arrays: dict[str, np.ndarray] = {}
        for k, member in enumerate(self.members):
            spec, parts = member.to_parts()
            specs.append(spec)
            arrays.update({f"m{k}/{name}": arr for name, arr in parts.items()})
        return {"n_classes": len(self.members), "members": specs}, arrays

    @classmethod
    def from_parts(
        cls, spec: dict[str, Any], arrays: dict[str, np.ndarray], n_features: int
    ) -> OneVsRestScorer:
        specs = spec.get("members")
        k = spec.get("n_classes")
        if not isinstance(specs, list) or not isinstance(k, int) or len(specs) != k or k < 2:
            raise ArtifactError("one-vs-rest scorer needs n_classes >= 2 member specs")
        members = []
        for i, member_spec in enumerate(specs):
            if not isinstance(member_spec, dict):
                raise ArtifactError(f"one-vs-rest member {i} spec must be a JSON object")
            prefix = f"m{i}/"
            part = {n[len(prefix) :]: a for n, a in arrays.items() if n.startswith(prefix)}
            members.append(BinaryScorer.from_parts(member_spec, part, n_features))
        return cls(tuple(members))
