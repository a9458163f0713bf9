"""Model artifacts without pickle: a zip of ``manifest.json`` and ``.npy`` arrays.

Layout of format version 2::

    manifest.json        format_version, kind (the scorer kind), classes, feature_names,
                         n_features, scorer (JSON spec of the scorer), arrays {name: file},
                         train_priors, training_costs, rule, metadata,
                         array_sha256 {file: digest}
    arrays/<name>.npy    one numeric array per scorer array

Loading reads the manifest as JSON, checks ``format_version`` and that ``kind`` is on
the allow-list of scorer kinds (:data:`SCORER_KINDS`), reads every array
with ``np.load(..., allow_pickle=False)``, checks each array's digest and dtype, and
builds an :class:`~models.inference.model.InferenceModel` from numbers and arrays only.
Nothing named in an artifact is ever imported. The sha256 of the whole blob is returned
by :func:`dump_model` and checked by :func:`load_model` when the caller passes the digest
it stored beside the blob. Format version 1 (binary models only) still loads.

Format version 3 is version 2 plus a **base**: an artifact that shares arrays with
another artifact (a recalibrated version shares its parent's booster) stores only the
arrays that differ and names the artifact holding the others::

    manifest.json        ... as version 2, plus
                         base {"sha256": digest of the base artifact's blob,
                               "arrays": [names of the arrays read from the base]}
    arrays/<name>.npy    only the arrays that are not in the base

``array_sha256`` still lists the digest of every array, shared ones included, and an
array is shared only when the base holds it under the same name with the same digest,
so the arrays served are byte-identical to the base's. The base must itself have no
base (one level, never a chain). :func:`load_model` needs the base's bytes
(``base=``) and checks them against the recorded digest; :func:`artifact_base` tells
which base an artifact needs. An artifact written without ``base`` is version 2,
byte-identical to what earlier builds wrote.

Format version 4 is the layout of version 2 (``base`` optional, as in version 3) for a
scorer of **several boosters**: kind ``binary_folds``
(:class:`~models.inference.fold_ensemble.FoldEnsembleScorer`, the k cross-fitting boosters of the
default model served together), its arrays under ``fold<i>/`` and its spec holding
``n_folds``, the ``ensemble_kinds`` of the folds, the score kind and the one shared
calibrator. Such kinds are written and read only as version 4, so a build that reads
versions 1-3 refuses them by their version. A version-4 artifact can be the base of a
recalibrated one (which shares its fold boosters' arrays).
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

from models.exceptions import ArtifactError, ArtifactIntegrityError
from models.inference.fold_ensemble import FoldEnsembleScorer
from models.inference.jous_scorer import JousScorer
from models.inference.model import RULES, InferenceModel
from models.inference.multiclass_scorers import AngleScorer, CalibratedVoteScorer, OneVsRestScorer
from models.inference.scorers import BinaryScorer, Scorer

FORMAT_VERSION = 2
BASED_FORMAT_VERSION = 3  # version 2 plus a base artifact holding shared arrays
MULTI_FORMAT_VERSION = 4  # a scorer of several boosters (fold ensemble), base optional
READABLE_VERSIONS = (1, 2, 3, 4)
MAX_MANIFEST_BYTES = 4 * 1024 * 1024
MAX_ARRAY_BYTES = 512 * 1024 * 1024
_NUMERIC_KINDS = frozenset("biuf")
_ZIP_TIME = (2020, 1, 1, 0, 0, 0)

#: The allow-list of scorer kinds an artifact may name, written out here on purpose: a
#: kind is readable because it is listed, never because some module happened to be
#: imported. Every scorer is numpy-only, apart from the training code of its family.
SCORER_KINDS: Mapping[str, type[Scorer]] = MappingProxyType(
    {
        scorer.kind: scorer
        for scorer in (
            BinaryScorer,
            JousScorer,
            AngleScorer,
            CalibratedVoteScorer,
            OneVsRestScorer,
            FoldEnsembleScorer,
        )
    }
)

#: Scorer kinds of several boosters: written as format version 4 (with or without a
#: base), and readable only from it, so that a build that knows versions 1-3 refuses
#: such an artifact by its version rather than by an unknown kind.
MULTI_BOOSTER_KINDS: frozenset[str] = frozenset({FoldEnsembleScorer.kind})


def sha256_hex(blob: bytes) -> str:
    """Hex sha256 digest of ``blob``."""
    return hashlib.sha256(blob).hexdigest()


def _json_label(value: Any) -> Any:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool | int | float | str):
        return value
    raise ArtifactError(f"class label {value!r} is not a JSON scalar")


def _npy(arr: np.ndarray, name: str) -> bytes:
    arr = np.ascontiguousarray(arr)
    if arr.dtype.kind not in _NUMERIC_KINDS:
        raise ArtifactError(f"array {name!r} has non-numeric dtype {arr.dtype}")
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return buf.getvalue()


def dump_model(
    model: InferenceModel, metadata: dict[str, Any] | None = None, *, base: bytes | None = None
) -> tuple[bytes, str]:
    """Serialise ``model`` to artifact bytes (format version 2, or 3 with ``base``).

    Parameters
    ----------
    model : InferenceModel
        E.g. ``CalibratedAdaMEC.to_inference()``.
    metadata : dict, optional
        JSON-able extra information (algorithm, parameters, ...), merged into the
        model's own metadata.
    base : bytes, optional
        Another artifact (of format version 1 or 2, without a base of its own) whose
        arrays this one shares: every array of ``model`` that the base holds under the
        same name with the same sha256 is left out and recorded under ``base`` in the
        manifest (format version 3). Loading then needs the base's bytes.

    Returns
    -------
    blob, sha256 : bytes, str
        Equal models give equal bytes (fixed zip timestamps, sorted keys).

    Raises
    ------
    ArtifactError
        ``base`` is not a readable artifact, or has a base itself.
    """
    spec, arrays = model.scorer.to_parts()
    files = {f"arrays/{name}.npy": _npy(arr, name) for name, arr in sorted(arrays.items())}
    digests = {f: sha256_hex(b) for f, b in files.items()}
    costs = model.training_costs
    multi = model.scorer.kind in MULTI_BOOSTER_KINDS
    manifest: dict[str, Any] = {
        "format_version": MULTI_FORMAT_VERSION if multi else FORMAT_VERSION,
        "kind": model.scorer.kind,
        "classes": [_json_label(c) for c in model.classes],
        "feature_names": None if model.feature_names is None else list(model.feature_names),
        "n_features": int(model.n_features),
        "scorer": spec,
        "arrays": {name: f"arrays/{name}.npy" for name in sorted(arrays)},
        "train_priors": [float(p) for p in model.train_priors],
        "training_costs": None if costs is None else np.asarray(costs, float).tolist(),
        "rule": model.rule,
        "metadata": {**model.metadata, **(metadata or {})},
        "array_sha256": digests,
    }
    if base is not None:
        base_digests = _base_digests(base)
        shared = sorted(
            name
            for name in arrays
            if base_digests.get(f"arrays/{name}.npy") == digests[f"arrays/{name}.npy"]
        )
        for name in shared:
            del files[f"arrays/{name}.npy"]
        manifest["format_version"] = MULTI_FORMAT_VERSION if multi else BASED_FORMAT_VERSION
        manifest["base"] = {"sha256": sha256_hex(base), "arrays": shared}
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        members = [("manifest.json", json.dumps(manifest, sort_keys=True).encode()), *files.items()]
        for fname, data in members:
            info = zipfile.ZipInfo(fname, date_time=_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    blob = out.getvalue()
    return blob, sha256_hex(blob)


def _manifest(blob: bytes) -> dict[str, Any]:
    try:
        with zipfile.ZipFile(io.BytesIO(blob)) as zf:
            manifest = json.loads(_read_member(zf, "manifest.json", MAX_MANIFEST_BYTES))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, json.JSONDecodeError, EOFError) as exc:
        raise ArtifactError(f"artifact is not a valid costwise model: {exc}") from None
    if not isinstance(manifest, dict):
        raise ArtifactError("artifact manifest must be a JSON object")
    return manifest


def _base_digests(base: bytes) -> dict[str, str]:
    """Array file -> sha256 of an artifact usable as a base (format 1 or 2, no base)."""
    manifest = _manifest(base)
    version = manifest.get("format_version")
    if version not in (1, FORMAT_VERSION, MULTI_FORMAT_VERSION) or "base" in manifest:
        raise ArtifactError(
            "a base artifact must hold its own arrays (format version 1, 2 or 4, without "
            "a base of its own)"
        )
    digests = manifest.get("array_sha256")
    if not isinstance(digests, dict):
        raise ArtifactError("base artifact manifest has no array_sha256 object")
    return {str(k): str(v) for k, v in digests.items()}


def artifact_base(blob: bytes) -> str | None:
    """The sha256 of the base artifact that ``blob`` needs to load, or None.

    Reads the manifest only (nothing is verified here; :func:`load_model` verifies).

    Raises
    ------
    ArtifactError
        ``blob`` is not an artifact, or its ``base`` field is malformed.
    """
    base = _manifest(blob).get("base")
    if base is None:
        return None
    if not isinstance(base, dict) or not isinstance(base.get("sha256"), str):
        raise ArtifactError("artifact field 'base' must be an object with a 'sha256' string")
    return str(base["sha256"])


def _read_member(zf: zipfile.ZipFile, name: str, limit: int) -> bytes:
    try:
        info = zf.getinfo(name)
    except KeyError:
        raise ArtifactError(f"artifact has no member {name!r}") from None
    if info.file_size > limit:
        raise ArtifactError(f"artifact member {name!r} is larger than {limit} bytes")
    return zf.read(info)


def load_model(
    blob: bytes, expected_sha256: str | None = None, *, base: bytes | None = None
) -> InferenceModel:
    """Load artifact bytes into an :class:`InferenceModel`, never unpickling anything.

    Parameters
    ----------
    blob : bytes
        The artifact.
    expected_sha256 : str, optional
        The digest recorded beside the blob; checked before anything is read.
    base : bytes, optional
        The base artifact, required when ``blob`` has one (format version 3, see
        :func:`artifact_base`); checked against the digest the manifest records.

    Raises
    ------
    ArtifactIntegrityError
        The blob's digest differs from ``expected_sha256``, the base's from the one
        recorded in the manifest, or an array's digest differs from the manifest's.
    ArtifactError
        Anything malformed: not a zip, unknown format version or kind, missing or
        non-numeric arrays, inconsistent shapes, a missing base.
    """
    if expected_sha256 is not None and sha256_hex(blob) != expected_sha256:
        raise ArtifactIntegrityError(
            "artifact sha256 does not match the digest recorded for it; refusing to load"
        )
    try:
        with zipfile.ZipFile(io.BytesIO(blob)) as zf:
            manifest = json.loads(_read_member(zf, "manifest.json", MAX_MANIFEST_BYTES))
            if isinstance(manifest, dict) and manifest.get("base") is not None:
                base_zf = _open_base(manifest, base)
                with base_zf:
                    return _build(zf, manifest, base_zf)
            return _build(zf, manifest, None)
    except ArtifactError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, json.JSONDecodeError, EOFError) as exc:
        raise ArtifactError(f"artifact is not a valid costwise model: {exc}") from None
    except (KeyError, TypeError, ValueError, AttributeError, OSError) as exc:
        raise ArtifactError(f"artifact manifest is malformed: {exc!r}") from None


def _open_base(manifest: dict[str, Any], base: bytes | None) -> zipfile.ZipFile:
    ref = manifest["base"]
    if manifest.get("format_version") not in (BASED_FORMAT_VERSION, MULTI_FORMAT_VERSION):
        raise ArtifactError(
            f"artifact has a base but format_version {manifest.get('format_version')!r} "
            f"(expected {BASED_FORMAT_VERSION} or {MULTI_FORMAT_VERSION})"
        )
    if not isinstance(ref, dict) or not isinstance(ref.get("sha256"), str):
        raise ArtifactError("artifact field 'base' must be an object with a 'sha256' string")
    if base is None:
        raise ArtifactError(
            f"artifact shares arrays with the base artifact {ref['sha256'][:12]}...; "
            "load it with base=<that artifact's bytes>"
        )
    if sha256_hex(base) != ref["sha256"]:
        raise ArtifactIntegrityError(
            "base artifact sha256 does not match the digest recorded in the artifact"
        )
    _base_digests(base)  # one level only: the base holds its own arrays
    return zipfile.ZipFile(io.BytesIO(base))


def _read_arrays(
    zf: zipfile.ZipFile,
    names: dict[str, Any],
    digests: dict[str, Any],
    shared: tuple[zipfile.ZipFile, frozenset[str]] | None = None,
) -> dict[str, np.ndarray]:
    arrays: dict[str, np.ndarray] = {}
    for name, fname in names.items():
        if not isinstance(fname, str) or fname != f"arrays/{name}.npy":
            raise ArtifactError(f"array {name!r} has an unexpected file name {fname!r}")
        source = shared[0] if shared is not None and name in shared[1] else zf
        data = _read_member(source, fname, MAX_ARRAY_BYTES)
        if sha256_hex(data) != digests.get(fname):
            raise ArtifactIntegrityError(f"array {fname!r} does not match its recorded sha256")
        arr = np.load(io.BytesIO(data), allow_pickle=False)
        if arr.dtype.kind not in _NUMERIC_KINDS:
            raise ArtifactError(f"array {name!r} has non-numeric dtype {arr.dtype}")
        arrays[name] = arr
    return arrays


def _scorer(
    zf: zipfile.ZipFile,
    manifest: dict[str, Any],
    version: int,
    n_features: int,
    base_zf: zipfile.ZipFile | None = None,
) -> Any:
    digests = manifest["array_sha256"]
    if version == 1:  # binary models: one ensemble, score kind and calibrator at top level
        if manifest.get("kind") != "calibrated_binary":
            raise ArtifactError(f"artifact kind {manifest.get('kind')!r} is not readable")
        raw = _read_arrays(zf, manifest["ensemble"]["arrays"], digests)
        spec = {
            "ensemble_kind": manifest["ensemble"]["kind"],
            "score_kind": manifest["score_kind"],
            "calibrator": manifest["calibrator"],
        }
        arrays = {f"ensemble/{k}": v for k, v in raw.items()}
        return BinaryScorer.from_parts(spec, arrays, n_features)
    kind = manifest.get("kind")
    if not isinstance(kind, str) or kind not in SCORER_KINDS:
        raise ArtifactError(f"artifact kind {kind!r} is not one of {sorted(SCORER_KINDS)}")
    if (kind in MULTI_BOOSTER_KINDS) != (version == MULTI_FORMAT_VERSION):
        raise ArtifactError(
            f"artifact kind {kind!r} cannot be read from format_version {version!r} "
            f"(scorers of several boosters, {sorted(MULTI_BOOSTER_KINDS)}, are version "
            f"{MULTI_FORMAT_VERSION} only)"
        )
    spec = manifest["scorer"]
    if not isinstance(spec, dict):
        raise ArtifactError("scorer spec must be a JSON object")
    shared = None
    if base_zf is not None:
        names = manifest["base"].get("arrays")
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ArtifactError("artifact field 'base.arrays' must be a list of array names")
        shared = (base_zf, frozenset(names))
    arrays = _read_arrays(zf, manifest["arrays"], digests, shared)
    return SCORER_KINDS[kind].from_parts(spec, arrays, n_features)


def _build(
    zf: zipfile.ZipFile, manifest: dict[str, Any], base_zf: zipfile.ZipFile | None
) -> InferenceModel:
    if not isinstance(manifest, dict):
        raise ArtifactError("artifact manifest must be a JSON object")
    version = manifest.get("format_version")
    if version not in READABLE_VERSIONS:
        raise ArtifactError(
            f"unsupported artifact format_version {version!r} (this build reads "
            f"{list(READABLE_VERSIONS)})"
        )
    n_features = int(manifest["n_features"])
    if version == BASED_FORMAT_VERSION and base_zf is None:
        raise ArtifactError("artifact format_version 3 needs a 'base' field")
    scorer = _scorer(zf, manifest, version, n_features, base_zf)
    classes = tuple(_json_label(c) for c in manifest["classes"])
    if len(classes) != scorer.n_classes or len(set(classes)) != len(classes):
        raise ArtifactError(f"expected {scorer.n_classes} distinct classes, got {classes!r}")
    names = manifest.get("feature_names")
    if names is not None and (
        len(names) != n_features or not all(isinstance(n, str) for n in names)
    ):
        raise ArtifactError("feature_names must be n_features strings")
    priors = np.asarray(manifest["train_priors"], dtype=np.float64)
    if priors.shape != (len(classes),) or not np.isfinite(priors).all() or (priors <= 0).any():
        raise ArtifactError("train_priors must be one positive finite number per class")
    costs = manifest.get("training_costs")
    if costs is not None:
        costs = np.asarray(costs, dtype=np.float64)
        k = len(classes)
        if costs.shape != (k, k) or not np.isfinite(costs).all() or (costs < 0).any():
            raise ArtifactError(f"training_costs must be a {k}x{k} matrix of costs >= 0")
    rule = manifest.get("rule", "threshold")
    if rule not in RULES:
        raise ArtifactError(f"unknown decision rule {rule!r}")
    metadata = manifest.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise ArtifactError("metadata must be a JSON object")
    try:
        return InferenceModel(
            classes=classes,
            feature_names=None if names is None else tuple(names),
            scorer=scorer,
            train_priors=priors,
            training_costs=costs,
            rule=rule,
            metadata=metadata,
        )
    except ValueError as exc:
        raise ArtifactError(f"artifact is inconsistent: {exc}") from None
