"""Evaluation: metrics and plot data of probabilities and decisions.

``metrics`` (Brier score, log loss, AUC, ECE, cost of decisions), ``plots`` (reliability,
ROC, cost curves and what-if data of a served model on held-out rows).

May import: inference (to score held-out rows), decisions, exceptions; never training code.
"""
