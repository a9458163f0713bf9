"""The connection budget of ``costwise serve``: who is closed when it is full, and the
file-descriptor limit it needs.

uvicorn's ``limit_concurrency`` counts every open connection, silent ones included: 3,000
anonymous connections opened and left silent (and opened again as the header timeout closed
them) made every request 503, ``/health/live`` included. Now a connection that waits for a
request head (it has sent nothing, or part of a head, or it idles between kept-alive
requests) holds its slot only while nobody needs it: when a new connection arrives at a
full budget, the oldest waiting connection is closed to admit it (as servers that reset
idle keep-alive connections under load do). Connections that never completed a request
head go first, then idle kept-alive ones (a client that has been served). Connections with
a request in flight are never closed; when they alone fill the budget, uvicorn's own cap
answers 503.

So a flood of silent connections can occupy at most the budget and is itself the thing
evicted; probes and clients that send a request head at once are admitted. Nothing here
depends on the peer's address. The protocol (:mod:`app.api.server.protocol`) reports the state
changes; this module imports no web framework.
"""

from __future__ import annotations

import logging
import resource
import time
import weakref
from collections import OrderedDict
from typing import Protocol

log = logging.getLogger(__name__)

FD_RESERVE = 512  # descriptors besides connections: database pools, parse workers, logs,
# and connections accepted in one loop turn before those they evict are closed
MIN_BUDGET = 16


class Evictable(Protocol):
    def evict(self) -> None: ...


class WaitingConnections:
    """The connections of one server process that wait for a request head, oldest first.

    Two queues: ``fresh`` (never completed a request head) and ``kept`` (served, idle
    between requests). Every operation is O(1), so a flood costs a constant per connection.
    """

    def __init__(self) -> None:
        self._fresh: OrderedDict[Evictable, None] = OrderedDict()
        self._kept: OrderedDict[Evictable, None] = OrderedDict()
        self.evicted = 0
        self._reported = 0
        self._reported_at = 0.0

    def __len__(self) -> int:
        return len(self._fresh) + len(self._kept)

    def opened(self, conn: Evictable) -> None:
        """A new connection: waits for its first head."""
        self._fresh[conn] = None

    def idle(self, conn: Evictable) -> None:
        """A served connection kept alive: waits for its next head (youngest of its queue)."""
        self._fresh.pop(conn, None)
        self._kept.pop(conn, None)
        self._kept[conn] = None

    def busy(self, conn: Evictable) -> None:
        """A request head is complete: the connection is not evictable until it idles."""
        self._fresh.pop(conn, None)
        self._kept.pop(conn, None)

    forget = busy  # a closed connection leaves the queues the same way

    def make_room(self, open_connections: int, budget: int, newcomer: Evictable) -> int:
        """Evict the oldest waiting connections until fewer than ``budget`` are open
        (``open_connections`` counts ``newcomer``); returns how many were closed."""
        closed = 0
        while open_connections - closed >= budget:
            victim = self.oldest(newcomer)
            if victim is None:
                break  # all the others have a request in flight: uvicorn's cap answers 503
            self.busy(victim)
            victim.evict()
            closed += 1
        if closed:
            self.evicted += closed
            self._report()
        return closed

    def oldest(self, newcomer: Evictable) -> Evictable | None:
        """The connection to close first: the oldest fresh one, else the oldest kept-alive
        one; never ``newcomer`` (the one being admitted)."""
        for queue in (self._fresh, self._kept):
            for conn in queue:
                if conn is not newcomer:
                    return conn
        return None

    def _report(self) -> None:
        """One warning per 10 s at most while the budget is full (not one per eviction)."""
        now = time.monotonic()
        if now - self._reported_at >= 10.0:
            log.warning(
                "connection budget full (COSTWISE_MAX_CONNECTIONS): closed %d waiting "
                "connections to admit new ones (%d in total)",
                self.evicted - self._reported,
                self.evicted,
            )
            self._reported, self._reported_at = self.evicted, now


_BY_SERVER: weakref.WeakKeyDictionary[object, WaitingConnections] = weakref.WeakKeyDictionary()


def waiting_connections(server_state: object) -> WaitingConnections:
    """The queues of the server (uvicorn's per-process ``ServerState``) a connection is in."""
    queues = _BY_SERVER.get(server_state)
    if queues is None:
        queues = _BY_SERVER[server_state] = WaitingConnections()
    return queues


def fit_open_files(max_connections: int) -> tuple[int, str | None]:
    """Raise the soft RLIMIT_NOFILE so that ``max_connections`` connections fit, and return
    the connection budget that fits (with a message to print when it is lower).

    Eviction only works while the budget fills before the descriptors run out: at the
    descriptor limit ``accept`` fails and the event loop stops accepting for a while,
    which is the outage again. The soft limit is raised up to the hard limit (inherited
    by uvicorn's worker processes); past that, the budget is lowered to fit.
    """
    needed = max_connections + FD_RESERVE
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return max_connections, None
    target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
    if target > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    if soft >= needed:
        return max_connections, None
    budget = max(MIN_BUDGET, int(soft) - FD_RESERVE)
    return budget, (
        f"costwise: the open-file limit ({soft}, hard limit {hard}) does not fit "
        f"COSTWISE_MAX_CONNECTIONS={max_connections}; serving at most {budget} connections "
        f"per process (raise the hard limit, e.g. ulimit -Hn, to {needed})"
    )
