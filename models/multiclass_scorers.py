"""Scorer kinds for multiclass models (registered on import; filled in by the
multiclass algorithms)."""

import models.jous  # noqa: F401  (JOUS-Boost scorer kind "jous")
import models.multiclass.scorers  # noqa: F401  (angle, samme, ovr scorer kinds)
