"""Alembic revisions (hand-reviewed). Alembic ignores this file (leading underscore)."""
