"""The one place where numerical-core errors become service errors."""

from __future__ import annotations

from typing import Any

from app.errors import ArtifactCorrupted, InvalidArgument
from models.exceptions import ArtifactError, ArtifactIntegrityError, CoreError, TrainingCancelled


class core_errors:  # noqa: N801 - used as a function: ``with core_errors("costs"):``
    """Translate :class:`models.exceptions.CoreError` into :class:`app.errors.ServiceError`.

    Bad costs, priors, features or labels become ``INVALID_ARGUMENT``; a stored
    artifact that fails its checks becomes ``ARTIFACT_CORRUPTED`` (never used). A message
    that starts with one of ``names`` (``"c_fn: ..."``) names the field itself.

    A class rather than a generator-based context manager: it is entered twice on every
    predict call, and this costs a third of the generator's microseconds.
    """

    __slots__ = ("field", "names")

    def __init__(self, field: str | None = None, *, names: tuple[str, ...] = ()) -> None:
        self.field = field
        self.names = names

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        """Raise the service error of a core error; let anything else pass unchanged."""
        if exc is None or not isinstance(exc, CoreError):
            return  # no error, or not the core's (service errors pass as they are)
        if isinstance(exc, TrainingCancelled):  # a cancellation is handled by its installer
            return
        if isinstance(exc, ArtifactIntegrityError):
            raise ArtifactCorrupted(f"stored artifact failed its integrity check: {exc}") from None
        if isinstance(exc, ArtifactError):
            raise ArtifactCorrupted(f"stored artifact cannot be loaded: {exc}") from None
        detail = str(exc)
        named = next((n for n in self.names if detail.startswith(f"{n}:")), None)
        if named is not None:
            raise InvalidArgument(detail, field=named) from None
        field = self.field
        if field and not detail.startswith(field):
            detail = f"{field}: {detail}"
        raise InvalidArgument(detail, field=field) from None
