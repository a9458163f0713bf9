"""Where a reference may read: the operator's data roots and allowed protocols.

* ``file://`` URIs (or a bare absolute path) must resolve (``os.path.realpath``, so
  symlinks are followed) to a path under one of ``COSTWISE_DATA_ROOTS``; a path with a
  ``..`` segment, outside every root, or a symlink leading out of a root is refused with
  :class:`~app.errors.Forbidden` (403) and never opened. A directory (a partitioned
  Parquet data set, Hive-style ``key=value`` folders allowed) is checked file by file the
  same way.
* ``http``/``https`` are refused (403 naming the setting that enables them) unless
  ``COSTWISE_DATA_PROTOCOLS`` lists them; then the file is fetched, fenced and bounded,
  by :mod:`app.services.datasets.fetching` (never through fsspec, whose http file system
  follows redirects to any address).
* Other schemes (``s3``/``gcs``/... when their fsspec package is installed) are opened
  through fsspec, if ``COSTWISE_DATA_PROTOCOLS`` allows the scheme.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Sequence
from typing import Any
from urllib.parse import unquote, urlsplit

from app.errors import Forbidden, InvalidArgument
from app.services.datasets.fetching import Fetched, FetchPolicy, fetch_to_file
from app.services.datasets.read_errors import network_cause, short_reason

__all__ = ["DataAccess"]


def _is_under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class DataAccess:
    """The operator's policy: which local directories and which URI schemes may be read.

    Parameters
    ----------
    data_roots : sequence of str
        Directories ``file://`` references may read; empty refuses them all.
    protocols : sequence of str
        URI schemes allowed (``file``, ``http``, ``https``, ``s3``, ...).
    fetch : FetchPolicy
        How ``http(s)`` references are fetched (allow-list, timeouts, size).
    """

    def __init__(
        self, data_roots: Sequence[str], protocols: Sequence[str], *, fetch: FetchPolicy
    ) -> None:
        self._roots = [os.path.realpath(os.path.expanduser(r)) for r in data_roots if r]
        self._protocols = {p.lower().strip() for p in protocols if p.strip()}
        self._fetch = fetch

    def resolve_local(self, uri: str, *, field: str = "dataset.uri") -> str:
        """The real path of a ``file://`` URI (or bare absolute path) under a root.

        Raises Forbidden (403) for ``..``, a path outside every root, a symlink out of a
        root, or when no root is configured. Does not check that the path exists.
        """
        parts = urlsplit(uri)
        if parts.scheme and parts.scheme != "file":
            raise InvalidArgument(f"{field}: not a file:// URI: {uri!r}", field=field)
        if parts.scheme == "file" and parts.netloc not in ("", "localhost"):
            raise Forbidden(
                f"{field}: file:// URIs name a local path (file:///path), got host "
                f"{parts.netloc!r}",
                field=field,
            )
        path = unquote(parts.path) if parts.scheme else uri
        if "\x00" in path:
            raise InvalidArgument(f"{field}: the path holds a NUL character", field=field)
        if not posixpath.isabs(path):
            raise InvalidArgument(
                f"{field}: a file path must be absolute (file:///path/to/data.parquet), "
                f"got {uri!r}",
                field=field,
            )
        if ".." in path.split("/"):
            raise Forbidden(f"{field}: a path with '..' is refused: {uri!r}", field=field)
        if not self._roots:
            raise Forbidden(
                f"{field}: reading local files is off (no COSTWISE_DATA_ROOTS configured)",
                field=field,
            )
        real = os.path.realpath(path)
        if not any(_is_under(real, root) for root in self._roots):
            raise Forbidden(
                f"{field}: {uri!r} is not under an allowed data root "
                "(COSTWISE_DATA_ROOTS; symlinks are followed)",
                field=field,
            )
        return real

    def scheme(self, uri: str, field: str) -> str:
        """The URI's scheme (``file`` for a bare absolute path), if it is allowed."""
        try:
            scheme = urlsplit(uri).scheme.lower()
        except ValueError:  # e.g. an unclosed IPv6 bracket
            raise InvalidArgument(f"{field}: {uri!r} is not a valid URI", field=field) from None
        if scheme == "" and uri.startswith("/"):
            scheme = "file"
        if not scheme:
            raise InvalidArgument(
                f"{field}: expected a URI (file:///path, https://...), got {uri!r}",
                field=field,
            )
        if scheme in ("http", "https") and scheme not in self._protocols:
            raise Forbidden(
                f"{field}: fetching {scheme}:// URLs is off; an operator enables it by adding "
                f"{scheme} to COSTWISE_DATA_PROTOCOLS (e.g. file,{scheme}), and reaches "
                "private or loopback hosts only by naming them in COSTWISE_DATA_ALLOW_HOSTS",
                field=field,
            )
        if scheme not in self._protocols:
            raise Forbidden(
                f"{field}: the {scheme}:// scheme is not allowed here "
                f"(COSTWISE_DATA_PROTOCOLS allows {', '.join(sorted(self._protocols))})",
                field=field,
            )
        return scheme

    def local_files(self, directory: str, uri: str, field: str) -> list[str]:
        """Every data file under ``directory`` (hidden and ``_``-prefixed ones skipped, as
        pyarrow does), each checked to stay under a root after resolving symlinks."""
        out: list[str] = []
        for dirpath, dirnames, filenames in os.walk(directory, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "_")))
            for d in dirnames:
                full = os.path.join(dirpath, d)
                if os.path.islink(full):
                    self.resolve_local(os.path.realpath(full), field=field)
            for name in sorted(filenames):
                if name.startswith((".", "_")):
                    continue
                full = os.path.join(dirpath, name)
                real = os.path.realpath(full)
                if not any(_is_under(real, root) for root in self._roots):
                    raise Forbidden(
                        f"{field}: {full!r} is a symlink out of the allowed data roots",
                        field=field,
                    )
                out.append(full)
        # Symlinked sub-directories are not walked (followlinks=False): refuse them above,
        # read only regular trees.
        if not out:
            raise InvalidArgument(
                f"{field}: the directory {uri!r} holds no data files", field=field
            )
        return out

    def fetch(self, uri: str, field: str, suffix: str) -> Fetched:
        """Download an ``http(s)`` reference (allowed scheme) into a temporary file, fenced
        and bounded (:func:`~app.services.datasets.fetching.fetch_to_file`)."""
        return fetch_to_file(uri, self._fetch, schemes=self._protocols, field=field, suffix=suffix)

    def remote(self, uri: str, scheme: str, field: str) -> tuple[Any, str]:
        """A pyarrow file system over fsspec's for ``scheme`` (an object store, not
        ``http(s)``: see :meth:`fetch`) and the path in it, once the file (or directory) is
        found there; unreachable or missing: InvalidArgument."""
        import fsspec
        from pyarrow.fs import FSSpecHandler, PyFileSystem

        if scheme in ("http", "https"):  # pragma: no cover - the reader fetches these
            raise InvalidArgument(f"{field}: {scheme}:// is fetched, not opened", field=field)
        try:
            fs = fsspec.filesystem(scheme)
        except (ImportError, ValueError) as exc:
            raise InvalidArgument(
                f"{field}: the {scheme}:// scheme needs its fsspec package installed "
                f"({short_reason(exc)})",
                field=field,
            ) from None
        path = fs._strip_protocol(uri)
        try:
            fs.info(path)
        except FileNotFoundError as exc:
            if network_cause(exc) is not None:
                raise InvalidArgument(
                    f"{field}: could not reach {uri!r}: connection failed", field=field
                ) from None
            raise InvalidArgument(f"{field}: no such file: {uri!r}", field=field) from None
        except Exception as exc:  # network errors of any fsspec backend
            raise InvalidArgument(
                f"{field}: could not reach {uri!r}: {type(exc).__name__}", field=field
            ) from None
        return PyFileSystem(FSSpecHandler(fs)), path
