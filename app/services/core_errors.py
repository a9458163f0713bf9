"""The one place where numerical-core errors become service errors."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from app.errors import ArtifactCorrupted, InvalidArgument, ServiceError
from models.exceptions import ArtifactError, ArtifactIntegrityError, CoreError, TrainingCancelled


@contextmanager
def core_errors(field: str | None = None, *, names: tuple[str, ...] = ()) -> Iterator[None]:
    """Translate :class:`models.exceptions.CoreError` into :class:`app.errors.ServiceError`.

    Bad costs, priors, features or labels become ``INVALID_ARGUMENT``; a stored
    artifact that fails its checks becomes ``ARTIFACT_CORRUPTED`` (never used). A message
    that starts with one of ``names`` (``"c_fn: ..."``) names the field itself.
    """
    try:
        yield
    except (ServiceError, TrainingCancelled):  # a cancellation is handled by its installer
        raise
    except ArtifactIntegrityError as exc:
        raise ArtifactCorrupted(f"stored artifact failed its integrity check: {exc}") from None
    except ArtifactError as exc:
        raise ArtifactCorrupted(f"stored artifact cannot be loaded: {exc}") from None
    except CoreError as exc:
        detail = str(exc)
        named = next((n for n in names if detail.startswith(f"{n}:")), None)
        if named is not None:
            raise InvalidArgument(detail, field=named) from None
        if field and not detail.startswith(field):
            detail = f"{field}: {detail}"
        raise InvalidArgument(detail, field=field) from None
