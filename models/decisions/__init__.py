"""Costs and decisions: the rule of least expected cost, and what it needs.

``rule`` (the cost matrix ``C[i][j]``, the decision of least expected cost, thresholds and
class priors), ``training_costs`` (checking and defaulting the cost matrices that cost-sensitive training
takes). Pure numpy/scipy over probabilities and costs; imports only exceptions.
"""
