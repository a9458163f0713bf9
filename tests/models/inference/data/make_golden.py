"""Write golden_v<N>.zip (N = current format) and its expected predictions. Run ONCE
per format version (``--v4``: the fold ensemble of the default model, format version 4;
``--v4 --oblique``: the same with oblique learners, golden_v4_oblique.zip, written once
when the ``"oblique"`` ensemble layout was added).

The test suite checks that this committed artifact keeps loading and predicting the
same; regenerating it would defeat that purpose, so only do it for a new format.
"""

from __future__ import annotations

import io
import json
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.datasets import make_classification

from models.auto import AutoCalibratedBoosting
from models.boosting.adaboost import AdaBoost
from models.boosting.calibrated import CalibratedAdaMEC
from models.inference.artifacts import FORMAT_VERSION, MULTI_FORMAT_VERSION, dump_model

HERE = Path(__file__).parent

if __name__ == "__main__":
    X, y = make_classification(300, 4, n_informative=3, n_redundant=1, random_state=11)
    X[::13, 1] = np.nan
    version = MULTI_FORMAT_VERSION if "--v4" in sys.argv else FORMAT_VERSION
    clf: Any
    oblique = "--oblique" in sys.argv
    if version == MULTI_FORMAT_VERSION:  # trees in the folds: the richer ensemble layout
        grid = [("oblique", 1, 15)] if oblique else [("tree", 2, 15)]
        clf = AutoCalibratedBoosting(grid, n_folds=3, random_state=0, n_jobs=1)
    else:
        clf = CalibratedAdaMEC(AdaBoost(n_estimators=20), random_state=0)
    clf.fit(X, np.where(y == 1, "fraud", "ok"))
    blob, sha = dump_model(
        clf.to_inference(["amount", "hour", "risk", "age"]),
        metadata={"note": f"golden artifact, format v{version}"},
    )
    assert (
        json.loads(zipfile.ZipFile(io.BytesIO(blob)).read("manifest.json"))["format_version"]
        == version
    )
    stem = f"golden_v{version}" + ("_oblique" if oblique else "")
    (HERE / f"{stem}.zip").write_bytes(blob)
    Xq = X[:12]
    (HERE / f"{stem}_expected.json").write_text(
        json.dumps(
            {
                "sha256": sha,
                "classes": clf.classes_.tolist(),
                "X": [[None if np.isnan(v) else float(v) for v in row] for row in Xq],
                "proba": clf.predict_proba(Xq).tolist(),
            },
            indent=1,
        )
    )
    print("wrote", sha)
