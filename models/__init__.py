"""costwise numerical core: boosting, calibration, cost-sensitive decisions, artifacts.

Pure numpy / scipy / scikit-learn; importable from a notebook without the service.
"""
