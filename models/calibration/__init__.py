"""Calibration maps: turning boosting scores into probabilities.

``calibrators`` (Platt, isotonic, beta, Venn-ABERS and the identity map behind one protocol,
and their saved state), ``venn_abers`` (inductive Venn-ABERS), ``inputs`` (the checked
inputs every map shares), ``multinomial`` (the multiclass map over vote fractions), ``spread`` (a
fold ensemble's map, fitted on single boosters' scores, made the map of their mean). The maps are part of
every served model and import only exceptions. Cross-fitting the scores they are fitted
on is training (:mod:`models.boosting.crossfit`); fitting a new map to a served model's
labelled traffic is the feedback loop (:mod:`models.feedback.recalibration`).
"""
