"""Pieces of the job path that need no database: stored data, chained callbacks."""

from __future__ import annotations

import io
import threading
import zipfile

import numpy as np
import pytest

from app.errors import ArtifactCorrupted, TrainingTimeLimit
from app.services.jobs.payload import pack_training_data, unpack_training_data
from app.services.training import TrainingData
from app.services.training.deadline import training_deadline
from models.boosting.progress import progress_callback, report
from models.exceptions import TrainingCancelled


@pytest.mark.parametrize(
    ("y", "names"),
    [
        (np.array(["no", "yes", "no"]), ["a", "b"]),
        (np.array([0, 1, 1]), None),
        (np.array([True, False, True]), ["é", "ß"]),
    ],
)
def test_training_data_round_trips_as_npy_without_pickle(
    y: np.ndarray, names: list[str] | None
) -> None:
    X = np.array([[1.0, np.nan], [2.0, 3.0], [4.0, 5.0]])
    blob, sha = pack_training_data(TrainingData(X, y, names))
    with zipfile.ZipFile(io.BytesIO(blob)) as archive:
        assert all(n.endswith(".npy") for n in archive.namelist())
    back = unpack_training_data(blob, sha)
    np.testing.assert_array_equal(back.X, X)
    np.testing.assert_array_equal(back.y, y)
    assert back.y.dtype == y.dtype and back.feature_names == names


def test_tampered_training_data_is_refused() -> None:
    blob, sha = pack_training_data(TrainingData(np.zeros((2, 1)), np.array([0, 1])))
    with pytest.raises(ArtifactCorrupted):
        unpack_training_data(blob[:-1] + b"x", sha)


def test_deadline_chains_to_the_outer_callback_and_lets_its_cancel_through() -> None:
    seen: list[tuple[str, int, int]] = []

    def outer(phase: str, done: int, total: int) -> None:
        seen.append((phase, done, total))
        if done == 2:
            raise TrainingCancelled("cancelled by the job")

    with (
        progress_callback(outer),
        pytest.raises(TrainingCancelled, match="by the job"),
        training_deadline(60.0),
    ):
        report(1, 5)
        report(2, 5)
    assert seen == [("boosting", 1, 5), ("boosting", 2, 5)]


def test_deadline_still_names_its_setting() -> None:
    with (
        pytest.raises(TrainingTimeLimit, match="COSTWISE_MAX_JOB_SECONDS"),
        training_deadline(1e-9, "COSTWISE_MAX_JOB_SECONDS"),
    ):
        report(1, 5)


def test_rows_with_no_total_are_shown_on_the_job_and_the_bar() -> None:
    """A CSV batch (rows unknown until read) reports ("scoring", rows, 0): the job's
    ``done`` and the CLI's bar show the rows; phases with no count keep what was shown."""
    from sqlalchemy.orm import sessionmaker

    from app.cli.progress import ProgressBar
    from app.services.jobs.progress import JobProgress

    job = JobProgress(sessionmaker(), "j", "w", 1, interval=1.0, shutdown=threading.Event())
    job.callback("checking", 0, 0)
    job.callback("scoring", 0, 0)
    job.callback("scoring", 640, 0)
    assert (job.snapshot()["done"], job.snapshot()["total"]) == (640, 0)
    job.callback("scoring", 1280, 0)
    job.callback("writing", 1500, 1500)
    assert (job.snapshot()["phase"], job.snapshot()["done"]) == ("writing", 1500)

    out = io.StringIO()
    bar = ProgressBar(out, min_interval=0.0, unit="rows")
    bar("scoring", 0, 0)
    bar("scoring", 1280, 0)
    assert out.getvalue().split("\r")[-1].strip() == "scoring     rows 1280"
    bar("scoring", 640, 1280)
    assert "rows 640/1280" in out.getvalue().split("\r")[-1]
