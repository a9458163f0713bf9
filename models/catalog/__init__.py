"""The catalog of trainable algorithms.

``algorithms`` gathers the declarations every algorithm module makes with the value
types of :mod:`models.specs` (``get_algorithm``) and assembles what is trained
(``build_estimator``); ``warmup`` compiles the numba kernels of every trainable layout
ahead of the first training (``python -m models.catalog.warmup``, run by the image build).
The top room of the core: it may import any other room, and none imports it.
"""
