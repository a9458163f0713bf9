"""Reliability runs: the load generator and the loopback server helper (see docs/reliability.md)."""
