"""Training benchmarks: fit time and memory of the boosting core, its weak learners and
variants, cross-fitting, and the service's default training (against scikit-learn and
LightGBM where they have an equivalent). Run them with ``python -m bench training.<name>``."""
