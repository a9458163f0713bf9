"""The few helpers several rooms share; each is small and imports no service room.

- :mod:`~app.services.common.inputs`: request data (JSON rows, records, CSV) turned into
  validated numpy arrays (prediction, training, outcomes, recalibration, batch, the API's
  body parsing).
- :mod:`~app.services.common.core_errors`: the one place where numerical-core errors
  become service errors.
- :mod:`~app.services.common.slots`: a non-blocking bound on work running at once
  (synchronous trainings, large requests).
- :mod:`~app.services.common.periodic`: a blocking upkeep function run every few seconds
  in a worker thread (log upkeep, known model names).

Imports no other service room (only :mod:`app.errors`, :mod:`app.settings` and the
numerical core), so every room may import it.
"""
