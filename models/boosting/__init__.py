"""Boosting: the reweighting loop and the estimators built on it.

``loop`` (the one boosting loop, :class:`~models.boosting.loop.BaseBoosting`), ``adaboost``
(discrete AdaBoost, Nikolaou et al. section 2.2), ``calibrated`` (calibrated AdaMEC:
AdaBoost + a calibration map + the cost threshold at decision time), ``crossfit``
(cross-fitted scores for calibration), ``prebinned`` (training from uint8 codes),
``progress`` (progress reports and cooperative cancellation).

May import: weak learners, features, inference, calibration, decisions, specs, exceptions.
Training code: nothing on the served path (``models.inference``) imports it.
"""
