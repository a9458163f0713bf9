"""Reproductions of the papers' experiments (see ``bench/papers/common.py`` for the harness)."""
