"""Compiled kernels (numba): the loops that numpy cannot vectorise.

``histogram`` (the weak learners' weighted histograms and tree growth, training),
``predict`` (tree walks, SAMME votes and the multinomial map's logits, serving),
``tree_records`` (tree nodes as 8-byte records for the compiled walk, and the row codes
they compare). Each kernel has a numpy form where it is used; numba is imported on first
call. Imports only exceptions: every other room may use a kernel.
"""
