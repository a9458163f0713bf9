"""Inference: what an artifact loads into and what the service serves, numpy only.

``model`` (:class:`~models.inference.model.InferenceModel`: a scorer, its classes and its
decision rule), ``scorers`` / ``multiclass_scorers`` / ``jous_scorer`` /
``fold_ensemble`` (features to class probabilities), ``ensemble`` / ``vote_ensemble`` /
``simplex`` (the boosted ensembles as flat arrays; their compiled walks are in
:mod:`models.kernels`), ``layouts`` (the registry of ensemble layouts: how each kind of
learner is stored, checked and evaluated), ``artifacts`` (the file format: a zip of ``manifest.json`` and
``.npy`` arrays, no pickle), ``explanation`` (the exact per-feature attribution of a
two-class score, from each layout's ``explain``, and the expected-cost margin).

May import: calibration's maps, kernels, decisions, features, specs, exceptions. Never training code (boosting loops, weak learners, the automatic default).
"""
