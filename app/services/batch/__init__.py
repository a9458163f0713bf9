"""Batch decisions: decide a whole data set with a registered version, as a job.

- :mod:`~app.services.batch.service`: ``BatchService``, the door (check, submit, run).
- :mod:`~app.services.batch.checks`: the feature columns and costs against the model.
- :mod:`~app.services.batch.sources`: the input's partitions and columns, the output.
- :mod:`~app.services.batch.parts`: one partition read, decided and written (in the job's
  worker or as a Dask task).
- :mod:`~app.services.batch.scoring`: one block of rows decided (predict's own code).
- :mod:`~app.services.batch.on_dask`: the partitions as tasks on a Dask cluster.
- :mod:`~app.services.batch.dataframes`: partition functions for a user's own Dask or
  Spark DataFrame (``map_partitions`` / ``mapInPandas``).
"""
