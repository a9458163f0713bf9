"""Quality benchmarks: the decisions and probabilities of the default model against
baselines (realised cost, log loss, Brier score), and the calibration and capacity choices
behind them. :mod:`bench.quality.baselines` defines the data sets, splits and cost settings
the others reuse. Run them with ``python -m bench quality.<name>``."""
