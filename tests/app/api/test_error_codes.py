"""One list of error codes (:data:`costwise.errors.ERROR_CODES`) behind /v1, /v2 and the
client: every code the service raises is in it, each code is declared once, and each
status the client meets maps to one exception class."""

from __future__ import annotations

from collections import Counter

import app.api.main  # noqa: F401  # every module that declares a service error
from app.api.errors import STATUS_BY_CODE
from app.api.v2.errors import V2_STATUS
from app.errors import ServiceError
from costwise.errors import ERROR_CODES, error_class


def _subclasses(cls: type[ServiceError]) -> set[type[ServiceError]]:
    out = set(cls.__subclasses__())
    for sub in list(out):
        out |= _subclasses(sub)
    return out


def test_every_service_error_code_is_declared_once() -> None:
    counts = Counter(e.code for e in ERROR_CODES)
    assert [c for c, n in counts.items() if n > 1] == []
    raised = {ServiceError.code} | {c.code for c in _subclasses(ServiceError)}
    assert raised <= set(counts), f"not in costwise.errors.ERROR_CODES: {raised - set(counts)}"


def test_both_doors_and_the_client_derive_from_the_list() -> None:
    for e in ERROR_CODES:
        assert STATUS_BY_CODE[e.code] == e.status
        assert V2_STATUS[e.code] == (e.v2_status or e.status)
        for status in e.statuses:  # one status, one exception class on the client
            assert error_class(status) is e.exception, (e.code, status)
