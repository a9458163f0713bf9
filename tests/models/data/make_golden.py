"""Write golden_v<N>.zip (N = current format) and its expected predictions. Run ONCE
per format version.

The test suite checks that this committed artifact keeps loading and predicting the
same; regenerating it would defeat that purpose, so only do it for a new format.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from sklearn.datasets import make_classification

from models.adaboost import AdaBoost
from models.artifacts import FORMAT_VERSION, dump_model
from models.calibrated import CalibratedAdaMEC

HERE = Path(__file__).parent

if __name__ == "__main__":
    X, y = make_classification(300, 4, n_informative=3, n_redundant=1, random_state=11)
    X[::13, 1] = np.nan
    clf = CalibratedAdaMEC(AdaBoost(n_estimators=20), random_state=0).fit(
        X, np.where(y == 1, "fraud", "ok")
    )
    blob, sha = dump_model(
        clf.to_inference(["amount", "hour", "risk", "age"]),
        metadata={"note": "golden artifact, format v1"},
    )
    (HERE / f"golden_v{FORMAT_VERSION}.zip").write_bytes(blob)
    Xq = X[:12]
    (HERE / f"golden_v{FORMAT_VERSION}_expected.json").write_text(
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
