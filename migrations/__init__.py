"""Alembic migration environment of the costwise registry.

This directory is an importable package so that :func:`app.db.alembic_config` can find
it next to ``app`` wherever costwise is installed (source tree or wheel). Revisions live
in ``versions/`` and are written or reviewed by hand; ``tests/migrations`` checks that
they match :mod:`app.registry.orm` exactly.
"""
