"""Diagnostic plots of a model version.

- :mod:`~app.services.plots.precompute`: the plot data computed once, at registration.
- :mod:`~app.services.plots.service`: ``Plots``, serving stored plots and the what-if
  recomputation for other costs.
- :mod:`~app.services.plots.charts`: each plot kind drawn as a chart.
- :mod:`~app.services.plots.svg`: the small SVG line-chart renderer.
"""
