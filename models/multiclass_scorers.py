"""Scorer kinds for multiclass models (registered on import; filled in by the
multiclass algorithms)."""
