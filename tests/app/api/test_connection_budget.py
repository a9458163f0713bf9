"""Who is closed when the connection budget is full (app/api/server/connection_budget.py).

The end-to-end proofs with a real server are in tests/reliability/test_connection_flood.py;
here the order of eviction, with plain objects standing for connections.
"""

from __future__ import annotations

import resource

from app.api.server.connection_budget import FD_RESERVE, WaitingConnections, fit_open_files


class Conn:
    """Stands for a connection: records that it was closed."""

    def __init__(self, name: str, closed: list[str]) -> None:
        self.name, self._closed = name, closed

    def evict(self) -> None:
        self._closed.append(self.name)


def test_fresh_connections_go_first_then_kept_alive_ones_never_busy_ones() -> None:
    closed: list[str] = []
    waiting = WaitingConnections()
    kept, busy, fresh1, fresh2 = (Conn(n, closed) for n in ("kept", "busy", "fresh1", "fresh2"))
    for c in (kept, busy, fresh1, fresh2):
        waiting.opened(c)
    waiting.busy(kept)
    waiting.idle(kept)  # served, kept alive: older than the fresh ones, but served
    waiting.busy(busy)  # a request in flight
    open_now = 4
    newcomer = Conn("new", closed)
    waiting.opened(newcomer)
    # budget 4, 5 open: two must go to get below it -- the fresh ones, oldest first
    assert waiting.make_room(open_now + 1, 4, newcomer) == 2
    assert closed == ["fresh1", "fresh2"]
    # one more: the kept-alive one; then only the busy one and the newcomer are left
    assert waiting.make_room(open_now + 1 - 2 + 1, 3, newcomer) == 1
    assert closed == ["fresh1", "fresh2", "kept"]
    assert waiting.make_room(2, 1, newcomer) == 0  # never the busy one, nor the newcomer
    assert waiting.evicted == 3 and len(waiting) == 1


def test_below_the_budget_nobody_is_closed() -> None:
    closed: list[str] = []
    waiting = WaitingConnections()
    conns = [Conn(str(i), closed) for i in range(10)]
    for c in conns:
        waiting.opened(c)
    assert waiting.make_room(10, 11, conns[-1]) == 0 and closed == []
    assert waiting.make_room(11, 11, conns[-1]) == 1 and closed == ["0"]


def test_idle_again_moves_to_the_young_end() -> None:
    closed: list[str] = []
    waiting = WaitingConnections()
    a, b, new = Conn("a", closed), Conn("b", closed), Conn("new", closed)
    for c in (a, b):
        waiting.opened(c)
        waiting.busy(c)
        waiting.idle(c)
    waiting.busy(a)
    waiting.idle(a)  # a served again after b: b is now the oldest idle one
    waiting.opened(new)
    waiting.make_room(3, 3, new)
    assert closed == ["b"]


def test_open_file_limit_fits_the_budget() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    budget, message = fit_open_files(64)
    assert budget == 64 and message is None
    assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] >= min(64 + FD_RESERVE, hard)
    if hard != resource.RLIM_INFINITY:  # past the hard limit: a lower budget, said why
        budget, message = fit_open_files(hard + 10_000)
        assert budget == max(16, hard - FD_RESERVE)
        assert message is not None and "COSTWISE_MAX_CONNECTIONS" in message
        assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == hard
