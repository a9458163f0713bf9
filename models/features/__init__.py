"""How feature matrices are represented for training and scoring.

``binning``: per-feature bin edges found once per fit, the uint8 codes the weak learners'
histograms read, the bounded reservoir of a streamed read, and the marks that tell a
served ensemble that its input is codes rather than raw values. Imports only exceptions.
"""
