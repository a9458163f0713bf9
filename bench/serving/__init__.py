"""Serving benchmarks: the predict path (v1, v2, one row and many), batch decisions, the
prediction log and the monitoring reads, against a hand-written scikit-learn endpoint
where one applies. Run them with ``python -m bench serving.<name>``."""
