"""Fetching an ``http(s)://`` reference: fenced, bounded in time and size, copied to disk.

:func:`fetch_to_file` downloads the file a reference names into a private temporary file
that pyarrow then reads like a local one (Parquet needs random access; the copy also
means the remote server is contacted once per opening, for a bounded time, and never
while the training holds its slot waiting on a slow server).

* **The fence.** Connections are made by
  :class:`~app.services.datasets.connections.FencedBackend`, an httpcore network backend: for every connection (the first request and each redirect) it resolves the
  host itself, refuses before connecting when any address is refused by the
  :class:`~app.services.datasets.addresses.AddressPolicy`, and connects to the address it
  checked (pinned: DNS is not asked again). Redirects are followed here, at most
  :data:`MAX_REDIRECTS`, each to ``http(s)`` only and checked again. httpcore is used
  directly (it is httpx's transport, already installed): no proxy from the environment,
  no automatic redirects, and a network backend that sees every connection.
* **Time.** ``timeout`` bounds the connection and each read; ``total_seconds`` bounds
  the whole fetch: a timer shuts the sockets down at the deadline, so a server sending a
  byte every few seconds is cut there.
* **Size.** At most ``max_bytes`` are written (413 beyond), streamed in chunks.
* **Errors never echo what was read**: they give the status code, "the response was cut
  off", "timed out after N s", "connection failed", never a header or a line of the body.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import tempfile
import threading
import time
import weakref
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

from app.errors import Forbidden, InvalidArgument, PayloadTooLarge
from app.services.datasets.addresses import AddressPolicy
from app.services.datasets.connections import DeadlinePassed, FencedBackend

__all__ = ["MAX_REDIRECTS", "FetchPolicy", "Fetched", "fetch_to_file"]

log = logging.getLogger(__name__)

MAX_REDIRECTS = 5
_REDIRECTS = {301, 302, 303, 307, 308}


@dataclass(frozen=True)
class FetchPolicy:
    """What a fetch may do, as one picklable value (Dask workers receive it whole).

    ``allow_hosts`` is ``COSTWISE_DATA_ALLOW_HOSTS``; ``own_hosts`` the service's
    ``COSTWISE_HOST``; ``timeout`` (``COSTWISE_DATA_FETCH_TIMEOUT``) bounds the connection
    and each read, ``total_seconds`` (``COSTWISE_DATA_FETCH_SECONDS``) the whole fetch,
    ``max_bytes`` (``COSTWISE_DATA_FETCH_MAX_BYTES``) its size.
    """

    allow_hosts: tuple[str, ...] = ()
    own_hosts: tuple[str, ...] = ()
    timeout: float = 10.0
    total_seconds: float = 120.0
    max_bytes: int = 1 << 30

    @classmethod
    def from_settings(cls, settings: Any) -> FetchPolicy:
        """Build from :class:`app.settings.Settings`."""
        return cls(
            tuple(settings.data_allow_hosts),
            (settings.host,),
            float(settings.data_fetch_timeout),
            float(settings.data_fetch_seconds),
            int(settings.data_fetch_max_bytes),
        )

    def addresses(self) -> AddressPolicy:
        return AddressPolicy.from_entries(self.allow_hosts, self.own_hosts)


class Fetched:
    """A downloaded copy: ``path`` (removed when this object is collected) and ``size``."""

    def __init__(self, path: str, size: int) -> None:
        self.path = path
        self.size = size
        self._remove = weakref.finalize(self, _unlink, path)

    def remove(self) -> None:
        """Remove the copy now (also done when the object is collected)."""
        self._remove()


def _unlink(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


_HOST_CHARS = re.compile(r"^[A-Za-z0-9._-]+$|^[0-9A-Fa-f:.]+$")


def _checked_url(url: str, schemes: Collection[str], *, hop: int, field: str, uri: str) -> str:
    """``url`` normalised (IDNA host, percent-encoded path) once it is a well-formed
    ``http(s)`` URL with a host and a valid port; a redirect's URL is never quoted."""
    import httpx

    what = f"{uri!r} is not a valid URL" if hop == 0 else f"{uri!r} redirected to an invalid URL"
    try:
        parsed = httpx.URL(url)
        host = parsed.raw_host.decode("ascii")
        port = parsed.port
    except (httpx.InvalidURL, ValueError, TypeError, UnicodeError):
        raise InvalidArgument(f"{field}: {what}", field=field) from None
    scheme = parsed.scheme
    if scheme not in ("http", "https") or scheme not in schemes:
        raise Forbidden(
            f"{field}: {uri!r} redirected to a URL whose scheme is not allowed (only "
            "http/https in COSTWISE_DATA_PROTOCOLS are followed)"
            if hop
            else f"{field}: the {scheme}:// scheme is not allowed here",
            field=field,
        )
    if not host or not _HOST_CHARS.match(host) or (port is not None and not 0 < port < 65536):
        raise InvalidArgument(f"{field}: {what} (a host name, and a port 1-65535)", field=field)
    return str(parsed)


def _host_header(url: str) -> bytes:
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    value = host if parts.port is None else f"{host}:{parts.port}"
    try:
        return value.encode("ascii")
    except UnicodeEncodeError:  # an internationalised name
        return value.encode("idna")


def fetch_to_file(
    uri: str, policy: FetchPolicy, *, schemes: Collection[str], field: str, suffix: str
) -> Fetched:
    """Download ``uri`` (``http(s)://``) under ``policy`` into a temporary file.

    Raises Forbidden (403) for a refused address (before connecting) or a redirect to a
    scheme not in ``schemes``, PayloadTooLarge (413) over ``max_bytes``, and
    InvalidArgument (422) for everything else that goes wrong: a status other than 200,
    a timeout, a failed connection, a cut-off response, too many redirects.
    """
    import httpcore

    def failed(what: str) -> InvalidArgument:
        return InvalidArgument(f"{field}: could not read {uri!r}: {what}", field=field)

    deadline = time.monotonic() + policy.total_seconds
    fence = FencedBackend(policy.addresses(), field, uri, deadline)
    timer = threading.Timer(policy.total_seconds, fence.cut)
    timer.daemon = True
    fd, path = tempfile.mkstemp(prefix="costwise-fetch-", suffix=suffix)
    done = False
    in_body = False
    t = policy.timeout
    timeouts = {"connect": t, "read": t, "write": t, "pool": t}
    try:
        timer.start()
        with (
            os.fdopen(fd, "wb") as out,
            httpcore.ConnectionPool(network_backend=fence, retries=0, http2=False) as pool,  # type: ignore[arg-type]
        ):
            url = uri
            for hop in range(MAX_REDIRECTS + 1):
                fence.hop = hop
                url = _checked_url(url, schemes, hop=hop, field=field, uri=uri)
                headers = [
                    (b"Host", _host_header(url)),
                    (b"User-Agent", b"costwise"),
                    (b"Accept-Encoding", b"identity"),
                ]
                with pool.stream(
                    "GET", url, headers=headers, extensions={"timeout": timeouts}
                ) as response:
                    status = response.status
                    if status in _REDIRECTS:
                        location = dict((k.lower(), v) for k, v in response.headers).get(
                            b"location"
                        )
                        if not location:
                            raise failed(f"the server answered HTTP {status} without a location")
                        try:
                            url = urljoin(url, location.decode("latin-1").strip())
                        except ValueError:
                            raise failed("the server redirected to an invalid URL") from None
                        continue
                    if status != 200:
                        missing = " (no such file)" if status in (404, 410) else ""
                        raise failed(f"the server answered HTTP {status}{missing}")
                    size = 0
                    in_body = True
                    for chunk in response.iter_stream():
                        size += len(chunk)
                        if size > policy.max_bytes:
                            raise PayloadTooLarge(
                                f"{field}: {uri!r} is larger than {policy.max_bytes} bytes "
                                "(setting COSTWISE_DATA_FETCH_MAX_BYTES); the fetch was stopped",
                                field=field,
                                limit=policy.max_bytes,
                            )
                        out.write(chunk)
                        if fence.was_cut:
                            raise DeadlinePassed()
                    if fence.was_cut:
                        raise DeadlinePassed()
                    done = True
                    return Fetched(path, size)
            raise failed(f"more than {MAX_REDIRECTS} redirects")
    except Forbidden as exc:  # an operator sees who tried to reach what
        log.warning("dataset fetch refused: %s", exc.detail)
        raise
    except DeadlinePassed:
        raise _timed_out(uri, field, policy) from None
    except httpcore.TimeoutException:
        if fence.was_cut:
            raise _timed_out(uri, field, policy) from None
        raise failed(
            f"timed out after {t:g} s waiting for the server (setting COSTWISE_DATA_FETCH_TIMEOUT)"
        ) from None
    except (httpcore.NetworkError, httpcore.ProtocolError, OSError):
        if fence.was_cut:
            raise _timed_out(uri, field, policy) from None
        raise failed("the response was cut off" if in_body else "connection failed") from None
    finally:
        timer.cancel()
        if not done:
            _unlink(path)


def _timed_out(uri: str, field: str, policy: FetchPolicy) -> InvalidArgument:
    return InvalidArgument(
        f"{field}: could not read {uri!r}: timed out after {policy.total_seconds:g} s "
        "(setting COSTWISE_DATA_FETCH_SECONDS); the fetch was stopped",
        field=field,
    )
