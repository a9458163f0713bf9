"""Numpy-only inference representation of a boosted ensemble.

An :class:`Ensemble` is the alpha-weighted sum of weak learners stored as flat arrays,
so that it can be written without pickle (one ``.npy`` per array) and evaluated with
numpy alone. Two learner kinds exist:

``"stumps"`` (one entry per learner, shape ``(M,)``)
    ``feature`` (int32), ``threshold``, ``value_left``, ``value_right``,
    ``value_missing`` (float64). ``h(x) = value_left`` if ``x[feature] <= threshold``,
    ``value_missing`` if ``x[feature]`` is NaN, else ``value_right``. Decision stumps and
    univariate logistic regressions (threshold ``-b0/b1``) both use this kind.
``"trees"`` (nodes of all trees concatenated, ``tree_offsets`` of shape ``(M + 1,)``)
    ``node_feature`` (int32, -1 for a leaf), ``node_threshold`` (float64),
    ``node_left`` / ``node_right`` (int32, child index *local to its tree*, -1 for a leaf),
    ``node_missing_left`` (uint8, 1 if NaN goes left), ``node_value`` (float64, the leaf
    output), ``tree_offsets`` (int64). Node 0 of each tree is its root; children have
    larger local indices than their parent, which rules out cycles.
``"linear"`` (one entry per learner, shape ``(M,)``)
    ``feature`` (int32), ``slope``, ``intercept``, ``value_missing`` (float64).
    ``h(x) = slope * x[feature] + intercept``, ``value_missing`` if ``x[feature]`` is NaN:
    the linear weak learner ``a phi(x) + b`` of cost-sensitive LogitBoost (Eqs. 50-53 of
    Masnadi-Shirazi & Vasconcelos 2007).
``"oblique"`` (learner ``t`` has ``R >= 2`` linear functions of *all* ``d`` features)
    ``coef`` (float64, ``(M * R * d,)``: learner-major, then function, then feature),
    ``intercept`` and ``value`` (float64, ``(M * R,)``), ``fill`` (float64, ``(M * d,)``).
    With ``x'`` = ``x`` whose NaN entries are replaced by the learner's ``fill`` (the
    training mean of the feature), ``s_r(x) = sum_j coef[t, r, j] x'_j + intercept[t, r]``
    (summed over ``j`` in index order, the same order for every batch) and
    ``h_t(x) = value[t, argmax_r s_r(x)]`` (ties: the lower ``r``). Two classes:
    ``R = 2``, function 0 is zero and ``value = (-1, +1)``, i.e. ``sign(w.x + b)`` with
    ``-1`` on the hyperplane; SAMME: ``R = K`` and ``value = (0, .., K-1)``, the argmax
    class of a linear model (:mod:`models.weak.oblique`).

Discrete learners output -1 or +1; the vote fraction counts outputs ``> 0``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.special import expit

from models.exceptions import ArtifactError, InvalidInput
from models.features.binning import codes_as_float, is_codes
from models.kernels.tree_records import pack_nodes

__all__ = ["Ensemble", "LINEAR_ARRAYS", "OBLIQUE_ARRAYS", "STUMP_ARRAYS", "TREE_ARRAYS"]

STUMP_ARRAYS: dict[str, type] = {
    "feature": np.int32,
    "threshold": np.float64,
    "value_left": np.float64,
    "value_right": np.float64,
    "value_missing": np.float64,
}
TREE_ARRAYS: dict[str, type] = {
    "node_feature": np.int32,
    "node_threshold": np.float64,
    "node_left": np.int32,
    "node_right": np.int32,
    "node_missing_left": np.uint8,
    "node_value": np.float64,
    "tree_offsets": np.int64,
}
LINEAR_ARRAYS: dict[str, type] = {
    "feature": np.int32,
    "slope": np.float64,
    "intercept": np.float64,
    "value_missing": np.float64,
}
OBLIQUE_ARRAYS: dict[str, type] = {
    "coef": np.float64,
    "intercept": np.float64,
    "value": np.float64,
    "fill": np.float64,
}
_SCHEMAS = {
    "stumps": STUMP_ARRAYS,
    "trees": TREE_ARRAYS,
    "linear": LINEAR_ARRAYS,
    "oblique": OBLIQUE_ARRAYS,
}
_CHUNK = 4096  # rows per block: keeps the (rows, M) temporaries in cache


def _chunk(X: np.ndarray, i: int) -> np.ndarray:
    """Rows ``i .. i + _CHUNK`` as float64 (pre-binned codes: 255 -> NaN)."""
    xc = X[i : i + _CHUNK]
    return codes_as_float(xc) if xc.dtype == np.uint8 else xc


#: Bound on a linear learner's output: a finite F (no inf - inf) for any finite input.
_LINEAR_CAP = 1e150


def row_sums(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``values @ weights`` computed row by row in a fixed order (batch-invariant).

    A BLAS matrix-vector product may sum a row in a different order depending on how
    many rows the batch holds (and on the CPU), so one row scored alone could differ in
    the last bit from the same row scored in a batch. Multiplying and reducing along the
    contiguous last axis sums every row with the same pairwise scheme whatever the batch,
    at about 0.15 us per row more for 100 learners.
    """
    return np.multiply(values, weights).sum(axis=1)


def _fail(msg: str) -> None:
    raise ArtifactError(msg)


def _check_arrays(alphas: Any, arrays: Any, kind: str, n_features: Any) -> dict[str, Any]:
    """Validate a learner layout; return derived data used for fast prediction."""
    if kind not in _SCHEMAS:
        _fail(f"kind must be one of {sorted(_SCHEMAS)}, got {kind!r}")
    if isinstance(n_features, bool) or not isinstance(n_features, int | np.integer):
        _fail(f"n_features must be an integer, got {n_features!r}")
    if n_features < 1:
        _fail(f"n_features must be >= 1, got {n_features}")
    if not isinstance(alphas, np.ndarray) or alphas.dtype != np.float64 or alphas.ndim != 1:
        _fail("'alphas' must be a 1-D float64 array")
    if alphas.size == 0:
        _fail("'alphas' must hold at least one learner weight")
    if not (np.all(np.isfinite(alphas)) and np.all(alphas > 0)):
        _fail("'alphas' must be finite and > 0")
    schema = _SCHEMAS[kind]
    if not isinstance(arrays, dict) or set(arrays) != set(schema):
        got = sorted(arrays) if isinstance(arrays, dict) else type(arrays).__name__
        _fail(f"{kind} arrays must be exactly {sorted(schema)}, got {got}")
    for name, dtype in schema.items():
        a = arrays[name]
        if not isinstance(a, np.ndarray) or a.dtype != dtype or a.ndim != 1:
            _fail(f"array {name!r} must be 1-D {np.dtype(dtype).name}")
        if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
            _fail(f"array {name!r} must be finite")
    m = alphas.size
    if kind in ("stumps", "linear"):
        for name in schema:
            if arrays[name].shape != (m,):
                _fail(f"array {name!r} must have shape ({m},), got {arrays[name].shape}")
        feat = arrays["feature"]
        if np.any((feat < 0) | (feat >= n_features)):
            _fail(f"array 'feature' must hold indices in [0, {n_features}), got {feat.tolist()}")
        return {}
    if kind == "oblique":
        return _check_oblique(arrays, m, int(n_features))
    return _check_trees(arrays, m, int(n_features))


def _check_oblique(arrays: dict[str, np.ndarray], m: int, d: int) -> dict[str, Any]:
    """Validate oblique learner arrays; return the number of functions per learner R."""
    n_fun = arrays["intercept"].size
    if n_fun % m or n_fun // m < 2:
        _fail(f"array 'intercept' must hold R >= 2 entries per learner ({m} learners)")
    r = n_fun // m
    for name, size in (("coef", m * r * d), ("value", m * r), ("fill", m * d)):
        if arrays[name].size != size:
            _fail(f"array {name!r} must have shape ({size},), got {arrays[name].shape}")
    return {"n_functions": r}


def _check_trees(arrays: dict[str, np.ndarray], m: int, n_features: int) -> dict[str, Any]:
    """Validate tree node arrays; return global child indices and the depth."""
    off = arrays["tree_offsets"]
    n_nodes = arrays["node_feature"].size
    if off.shape != (m + 1,) or off[0] != 0 or off[-1] != n_nodes or np.any(np.diff(off) < 1):
        _fail(f"'tree_offsets' must be {m + 1} increasing offsets from 0 to {n_nodes}")
    for name in TREE_ARRAYS:
        if name != "tree_offsets" and arrays[name].shape != (n_nodes,):
            _fail(f"array {name!r} must have shape ({n_nodes},)")
    feat, left, right = arrays["node_feature"], arrays["node_left"], arrays["node_right"]
    if np.any(arrays["node_missing_left"] > 1):
        _fail("array 'node_missing_left' must hold 0 or 1")
    leaf = feat == -1
    if np.any(~leaf & ((feat < 0) | (feat >= n_features))):
        _fail(f"array 'node_feature' must hold -1 (leaf) or indices in [0, {n_features})")
    if np.any(leaf & ((left != -1) | (right != -1))):
        _fail("leaves must have node_left == node_right == -1")
    tree_of = np.repeat(np.arange(m), np.diff(off))
    local = np.arange(n_nodes) - off[tree_of]
    size = np.diff(off)[tree_of]
    inner = ~leaf
    for name, child in (("node_left", left), ("node_right", right)):
        c = child[inner]
        if np.any((c <= local[inner]) | (c >= size[inner])):
            _fail(f"array {name!r}: a child index is out of range or not after its parent")
    glob_l = np.where(leaf, np.arange(n_nodes), left + off[tree_of])
    glob_r = np.where(leaf, np.arange(n_nodes), right + off[tree_of])
    parents = np.bincount(np.concatenate([glob_l[inner], glob_r[inner]]), minlength=n_nodes)
    expected = np.ones(n_nodes, dtype=np.int64)
    expected[off[:-1]] = 0
    if not np.array_equal(parents, expected):
        _fail("tree nodes must form trees: every non-root node needs exactly one parent")
    depth, level = 0, off[:-1]
    while True:  # terminates: children are after parents, every node visited once
        level = np.concatenate([glob_l[level][inner[level]], glob_r[level][inner[level]]])
        if level.size == 0:
            break
        depth += 1
    return {"left": glob_l.astype(np.intp), "right": glob_r.astype(np.intp), "depth": depth}


@dataclass(frozen=True, eq=False)
class Ensemble:
    """Alpha-weighted sum of weak learners, stored as flat arrays.

    Parameters
    ----------
    kind : {"stumps", "trees", "linear"}
        Learner layout (see the module docstring).
    alphas : ndarray of float64, shape (M,)
        Voting weights alpha_t > 0 (Eq. 5 for AdaBoost).
    arrays : dict of str to ndarray
        Learner arrays of the layout ``kind``.
    n_features : int
        Number of input columns expected by :meth:`decision_function`.

    Raises
    ------
    ArtifactError
        If any array is malformed (dtype, shape, index range, non-finite values).

    References
    ----------
    Nikolaou et al., "Cost-sensitive boosting algorithms: do we really need them?",
    Machine Learning 104 (2016): F(x) = sum_t alpha_t h_t(x) (Eq. 7), the vote fraction
    s(x) (Eq. 24) and the logistic score s'(x) (Eq. 25).
    """

    kind: str
    alphas: np.ndarray
    arrays: dict[str, np.ndarray]
    n_features: int
    _derived: dict[str, Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        derived = _check_arrays(self.alphas, self.arrays, self.kind, self.n_features)
        a = self.alphas
        if self.kind == "stumps":
            v = self.arrays
            for tag, f in (("F", lambda z: z), ("V", lambda z: (z > 0).astype(np.float64))):
                vl, vr, vm = f(v["value_left"]), f(v["value_right"]), f(v["value_missing"])
                derived[f"const{tag}"] = float(a @ vr)
                derived[f"left{tag}"] = a * (vl - vr)
                miss = np.zeros(int(self.n_features))
                np.add.at(miss, v["feature"], a * (vm - vr))
                derived[f"miss{tag}"] = miss
            derived["feature"] = v["feature"].astype(np.intp)
        elif self.kind == "linear":
            derived["feature"] = self.arrays["feature"].astype(np.intp)
        elif self.kind == "oblique":
            m, r, d = self.alphas.size, derived["n_functions"], int(self.n_features)
            # writeable contiguous copies: an artifact's arrays are read-only, which the
            # compiled kernel (models.kernels.predict.oblique_outputs) would take as
            # another type and compile again on a request
            derived["coef"] = np.array(self.arrays["coef"].reshape(m, r, d))
            derived["intercept"] = np.array(self.arrays["intercept"].reshape(m, r))
            derived["value"] = np.array(self.arrays["value"].reshape(m, r))
            derived["fill"] = np.array(self.arrays["fill"].reshape(m, d))
        else:
            derived["leafF"] = self.arrays["node_value"]
            derived["leafV"] = (self.arrays["node_value"] > 0).astype(np.float64)
        object.__setattr__(self, "_derived", derived)

    @property
    def n_learners(self) -> int:
        """Number of weak learners M."""
        return int(self.alphas.size)

    def _check_X(self, X: Any) -> np.ndarray:
        if is_codes(X):  # pre-binned training: converted chunk by chunk (_chunk)
            X = np.asarray(X)
            if X.ndim != 2 or X.shape[1] != self.n_features:
                raise InvalidInput(
                    f"X must be 2-D with {self.n_features} columns, got shape {X.shape}"
                )
            return X
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_features:
            raise InvalidInput(f"X must be 2-D with {self.n_features} columns, got shape {X.shape}")
        return X

    def _stump_sum(self, X: np.ndarray, tag: str) -> np.ndarray:
        d = self._derived
        thr = self.arrays["threshold"]
        out = np.empty(X.shape[0])
        codes = X.dtype == np.uint8
        has_nan = codes or bool(np.isnan(X).any())
        for i in range(0, X.shape[0], _CHUNK):
            xc = _chunk(X, i)
            left = np.take(xc, d["feature"], axis=1) <= thr
            r = row_sums(left, d[f"left{tag}"])
            if has_nan:
                r += row_sums(np.isnan(xc), d[f"miss{tag}"])
            out[i : i + _CHUNK] = r + d[f"const{tag}"]
        return out

    def _tree_nodes(self, xc: np.ndarray) -> np.ndarray:
        """Leaf index reached by every row of ``xc`` in every tree, shape (rows, M).

        One compiled call (:func:`models.kernels.predict.tree_leaves`): the rows are
        coded once, and the trees walked eight at a time on 8-byte node records
        (:mod:`models.kernels.tree_records`) without a branch; the leaves are those of the
        one-tree walk, so the sums over them keep their bits.
        """
        from models.kernels.predict import as_kernel_input, tree_leaves  # numba, on first use

        k = self.walk_arrays()
        return tree_leaves(  # type: ignore[no-any-return]
            as_kernel_input(xc), k["roots"], k["feature"], k["threshold"], k["left"],
            k["right"], k["missing_left"], k["node_ids"], k["nodes"], k["node_roots"],
            k["record_node"], k["cuts"], k["cut_offsets"], self._derived["depth"],
        )  # fmt: skip

    def walk_arrays(self) -> dict[str, Any]:
        """Trees: the arrays of the compiled walk (:mod:`models.kernels.predict`), made on
        the first prediction (training makes many ensembles it never walks) and shared
        with a :class:`~models.inference.vote_ensemble.VoteEnsemble` over this ensemble:
        the flat node arrays with global child indices and the node records of
        :func:`models.kernels.tree_records.pack_nodes`. Writeable contiguous copies: an
        artifact's arrays are read-only, which numba would compile as another type."""
        k: dict[str, Any] | None = self._derived.get("walk")
        if k is not None:
            return k
        a, g = self.arrays, self._derived
        roots = np.array(a["tree_offsets"][:-1], dtype=np.int64)
        feature = np.array(a["node_feature"], dtype=np.int64)
        threshold = np.array(a["node_threshold"], dtype=np.float64)
        left = np.array(g["left"], dtype=np.int64)
        right = np.array(g["right"], dtype=np.int64)
        missing_left = np.array(a["node_missing_left"] == 1)
        nodes, node_roots, order, cuts, cut_offsets = pack_nodes(
            roots, feature, threshold, left, right, missing_left, int(self.n_features)
        )
        k = dict(
            roots=roots, feature=feature, threshold=threshold, left=left, right=right,
            missing_left=missing_left, node_ids=np.arange(feature.size, dtype=np.int64),
            nodes=nodes, node_roots=node_roots, record_node=order, cuts=cuts,
            cut_offsets=cut_offsets,
        )  # fmt: skip
        self._derived["walk"] = k  # the same arrays whichever thread gets here first
        return k

    def _linear_outputs(self, X: np.ndarray) -> np.ndarray:
        """h_t(x) of every linear learner, shape (rows, M)."""
        a = self.arrays
        x = np.take(X, self._derived["feature"], axis=1)
        with np.errstate(over="ignore"):  # absurd x (|x| near 1e308): clipped below
            h = np.clip(x * a["slope"] + a["intercept"], -_LINEAR_CAP, _LINEAR_CAP)
        return np.where(np.isnan(x), a["value_missing"], h)

    def _oblique_outputs(self, X: np.ndarray) -> np.ndarray:
        """h_t(x) of every oblique learner, shape (rows, M), in row blocks.

        One compiled call per block (:func:`models.kernels.predict.oblique_outputs`): a
        row's products are summed along the features in numpy's pairwise order, not by a
        BLAS product, so its outputs do not depend on the batch it came in. The numpy
        form (about ten calls on (rows, M, R, d) temporaries) took about 30 us for one
        row and 3 times as long for 10,000 (tests/models/kernels/test_predict_kernels.py checks
        the kernel against it bit for bit).
        """
        from models.kernels.predict import as_kernel_input, oblique_outputs  # numba

        d = self._derived
        coef, b, value, fill = d["coef"], d["intercept"], d["value"], d["fill"]
        if X.shape[0] <= _CHUNK and X.dtype != np.uint8:
            return oblique_outputs(as_kernel_input(X), coef, b, value, fill)  # type: ignore[no-any-return]
        out = np.empty((X.shape[0], coef.shape[0]))
        for i in range(0, X.shape[0], _CHUNK):  # pre-binned codes: float one block at a time
            xc = as_kernel_input(_chunk(X, i))
            out[i : i + xc.shape[0]] = oblique_outputs(xc, coef, b, value, fill)
        return out

    def _raw(self, X: np.ndarray, tag: str) -> np.ndarray:
        if self.kind == "oblique":
            h = self._oblique_outputs(X)
            h = h if tag == "F" else (h > 0).astype(np.float64)
            out = np.empty(X.shape[0])
            for i in range(0, X.shape[0], _CHUNK):
                out[i : i + _CHUNK] = row_sums(h[i : i + _CHUNK], self.alphas)
            return out
        if self.kind == "stumps":
            return self._stump_sum(X, tag)
        if self.kind == "linear":
            out = np.empty(X.shape[0])
            for i in range(0, X.shape[0], _CHUNK):
                h = self._linear_outputs(_chunk(X, i))
                h = h if tag == "F" else (h > 0).astype(np.float64)
                out[i : i + _CHUNK] = row_sums(h, self.alphas)
            return out
        out = np.empty(X.shape[0])
        leaf_values = self._derived[f"leaf{tag}"]
        for i in range(0, X.shape[0], _CHUNK):
            out[i : i + _CHUNK] = row_sums(leaf_values[self._tree_nodes(_chunk(X, i))], self.alphas)
        return out

    def learner_outputs(self, X: Any) -> np.ndarray:
        """Outputs h_t(x) of every learner, shape (n_samples, M) (used by staged scores)."""
        X = self._check_X(X)
        if X.dtype == np.uint8:
            X = codes_as_float(X)
        if self.kind == "trees":
            return self.arrays["node_value"][self._tree_nodes(X)]
        if self.kind == "linear":
            return self._linear_outputs(X)
        if self.kind == "oblique":
            return self._oblique_outputs(X)
        a = self.arrays
        x = np.take(X, self._derived["feature"], axis=1)
        h = np.where(x <= a["threshold"], a["value_left"], a["value_right"])
        return np.where(np.isnan(x), a["value_missing"], h)

    def decision_function(self, X: Any) -> np.ndarray:
        """F(x) = sum_t alpha_t h_t(x), Eq. 7 of Nikolaou et al.; shape (n_samples,)."""
        return self._raw(self._check_X(X), "F")

    def vote_fraction(self, X: Any) -> np.ndarray:
        """s(x) = sum_{t: h_t(x) > 0} alpha_t / sum_t alpha_t, Eq. 24; in [0, 1]."""
        s = self._raw(self._check_X(X), "V") / float(self.alphas.sum())
        return np.clip(s, 0.0, 1.0)

    def score(self, X: Any, kind: str) -> np.ndarray:
        """Raw score in [0, 1]: ``"vote"`` = s(x) (Eq. 24), ``"logistic"`` = s'(x) (Eq. 25)."""
        if kind == "vote":
            return self.vote_fraction(X)
        if kind == "logistic":
            return expit(2.0 * self.decision_function(X))  # no overflow warning for large |F|
        raise InvalidInput(f"score kind must be 'vote' or 'logistic', got {kind!r}")

    def to_arrays(self) -> dict[str, np.ndarray]:
        """Flat name -> array mapping (``alphas`` plus the learner arrays), numeric only."""
        out = {"alphas": self.alphas.copy()}
        out.update({k: v.copy() for k, v in self.arrays.items()})
        return out

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], kind: str, n_features: int) -> Ensemble:
        """Rebuild an ensemble from :meth:`to_arrays` output, validating everything.

        Raises
        ------
        ArtifactError
            On a missing or unknown array, a wrong dtype or shape, an index out of range,
            a malformed tree or a non-finite value.
        """
        if not isinstance(arrays, dict) or "alphas" not in arrays:
            raise ArtifactError("arrays must be a dict holding 'alphas'")
        copies = {
            k: (np.array(v, copy=True) if isinstance(v, np.ndarray) else v)
            for k, v in arrays.items()
        }
        for v in copies.values():
            if isinstance(v, np.ndarray):
                v.flags.writeable = False
        rest = {k: v for k, v in copies.items() if k != "alphas"}
        return cls(kind, copies["alphas"], rest, n_features)
