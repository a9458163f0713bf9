"""How a failed read is told: the first line of the error, or, for a file fetched from
elsewhere, what went wrong without any of what was read.

pyarrow's messages quote the data (a CSV line that does not parse, the cell that is not
a number, the header's column names); for a local file under the operator's roots that
helps, but for a remote reference it would hand the fetched bytes back to the caller:
:func:`failure_reason` then picks one of a few fixed descriptions instead.
"""

from __future__ import annotations

__all__ = ["failure_reason", "network_cause", "short_reason"]


def network_cause(exc: BaseException) -> BaseException | None:
    """The connection error behind fsspec's FileNotFoundError, if there is one (fsspec's
    http file system reports a refused connection as a missing file)."""
    seen = exc.__cause__ or exc.__context__
    while seen is not None:
        if isinstance(seen, ConnectionError | TimeoutError) or "Connect" in type(seen).__name__:
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def short_reason(exc: BaseException) -> str:
    """The first line of ``exc`` (at most 300 characters), or its type's name."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:300]


# (fragment of pyarrow's message, fixed description): the description only is shown
_KINDS = (
    ("magic bytes", "not a Parquet file"),
    ("parquet file size is 0", "the file is empty"),
    ("empty csv", "the file is empty"),
    ("conversion error", "a cell is not a number"),
    ("expected", "not a well-formed CSV file (rows with different numbers of cells)"),
    ("csv parse error", "not a well-formed CSV file"),
    ("unicode", "not UTF-8 text"),
    ("utf8", "not UTF-8 text"),
    ("utf-8", "not UTF-8 text"),
    ("couldn't deserialize thrift", "a damaged Parquet file"),
    ("corrupt", "a damaged file"),
    ("gzip", "a damaged compressed file"),
    ("bz2", "a damaged compressed file"),
)


def failure_reason(exc: BaseException, fmt: str, *, remote: bool) -> str:
    """Why reading failed: :func:`short_reason` for a local file; for a remote one a
    fixed description (``not a Parquet file``, ``a cell is not a number``, ...) chosen
    from the error, never its text."""
    if not remote:
        return short_reason(exc)
    text = str(exc).lower()
    for fragment, description in _KINDS:
        if fragment in text:
            return description
    return f"not a readable {'CSV' if fmt == 'csv' else 'Parquet'} file"
