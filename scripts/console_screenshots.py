"""Regenerate the console's screenshots in docs/images/ in headless Chromium: console.png
(a two-class version), monitoring.png, console-recalibrated.png (version 3, recalibrated
from outcomes in the monitoring panel) and console-multiclass.png (three classes: the
cost-matrix what-if).

    .venv/bin/python scripts/console_screenshots.py

On a fresh SQLite registry (a temporary directory), from examples/fraud.csv: version 1
(platt) and 2 (isotonic) are trained on the first 3,000 rows; version 1 then serves a
week of traffic from the other 3,000 rows, 400 a day with c_fp = 1, c_fn = 20. From day
-2 on the traffic is resampled with three times as much fraud (a prior shift). Outcomes
(the true labels) are sent for every day but today. The log's times are moved back by
whole days with one UPDATE per day (the service stamps them when it serves), so that the
daily buckets show a week; nothing else is changed.
"""

from __future__ import annotations

import csv
import os
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import numpy as np
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from sklearn.datasets import load_wine
from sqlalchemy import create_engine, update

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.db import upgrade_to_head  # noqa: E402
from app.registry.orm import LoggedPrediction  # noqa: E402
from app.settings import Settings  # noqa: E402
from tests.app.console.conftest import serve  # noqa: E402

COSTS = {"c_fp": 1, "c_fn": 20}
DAYS = 7
PER_DAY = 400


def read_fraud() -> tuple[list[str], np.ndarray, np.ndarray]:
    with open(ROOT / "examples" / "fraud.csv", newline="") as f:
        rows = list(csv.reader(f))
    # an empty cell is a missing value (NaN here, JSON null in the requests)
    body = np.asarray([[float(v) if v else np.nan for v in r] for r in rows[1:]])
    header = rows[0]
    return header[:-1], body[:, :-1], body[:, -1].astype(int)


def traffic(X: np.ndarray, y: np.ndarray, day: int, rng: np.random.Generator) -> np.ndarray:
    """Row indices of one day's traffic: the natural fraud rate, tripled from day -2 on."""
    if day < DAYS - 3:
        return rng.choice(len(X), PER_DAY, replace=False)
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    n_pos = int(round(PER_DAY * 3 * y.mean()))
    return rng.permutation(np.r_[rng.choice(pos, n_pos), rng.choice(neg, PER_DAY - n_pos)])


def rows(X: np.ndarray) -> list[list[float | None]]:
    return [[None if np.isnan(v) else float(v) for v in r] for r in X]


def wait(driver: webdriver.Chrome, script: str, what: str) -> None:
    WebDriverWait(driver, 30, 0.05).until(lambda d: d.execute_script(script), what)


def content(driver: webdriver.Chrome, name: str) -> None:
    """Screenshot the versions, plots and what-if panels (docs/images/``name``)."""
    box = driver.execute_script(
        "const a = document.querySelector('#versions-panel').getBoundingClientRect();"
        "const b = document.querySelector('.detail').getBoundingClientRect();"
        "return [a.top, b.bottom];"
    )
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": 1280, "height": int(box[1]) + 12, "deviceScaleFactor": 1, "mobile": False},
    )
    driver.save_screenshot(str(ROOT / "docs" / "images" / name))


def main() -> None:
    names, X, y = read_fraud()
    with tempfile.TemporaryDirectory(prefix="costwise-shots-") as tmp:
        url_db = f"sqlite:///{tmp}/registry.db"
        upgrade_to_head(url_db)
        shoot(names, X, y, url_db)


def shoot(names: list[str], X: np.ndarray, y: np.ndarray, url_db: str) -> None:
    train, pool_X, pool_y = slice(0, 3000), X[3000:], y[3000:]
    settings = Settings(database_url=url_db, max_train_rows=10_000)
    with serve(settings) as url, httpx.Client(base_url=url, timeout=120) as api:
        for calibration in ("platt", "isotonic"):
            body = {"features": rows(X[train]), "labels": y[train].tolist(),
                    "feature_names": names, "calibration": calibration, "n_estimators": 60}  # fmt: skip
            r = api.post("/v1/models/fraud/versions", json=body)
            r.raise_for_status()
        api.put("/v1/models/fraud/aliases/production", json={"version": 1}).raise_for_status()
        rng = np.random.default_rng(0)
        days = []
        for day in range(DAYS):
            idx = traffic(pool_X, pool_y, day, rng)
            r = api.post("/v1/models/fraud/predict",
                         json={"instances": rows(pool_X[idx]), "costs": COSTS})  # fmt: skip
            r.raise_for_status()
            days.append(([p["id"] for p in r.json()["predictions"]], pool_y[idx].tolist()))
        deadline = time.monotonic() + 30
        while api.get("/v1/models/fraud/monitoring").json()["versions"][:1] == [] or (
            api.get("/v1/models/fraud/monitoring").json()["versions"][0]["total"]["predictions"]
            < DAYS * PER_DAY
        ):
            if time.monotonic() > deadline:
                raise SystemExit("the predictions were not logged")
            time.sleep(0.1)
        engine = create_engine(url_db)
        now = datetime.now(UTC)
        with engine.begin() as conn:
            for day, (ids, _) in enumerate(days):
                conn.execute(
                    update(LoggedPrediction)
                    .where(LoggedPrediction.prediction_id.in_(ids))
                    .values(created_at=now - timedelta(days=DAYS - 1 - day))
                )
        engine.dispose()
        for ids, labels in days[:-1]:
            items = [{"id": i, "label": label} for i, label in zip(ids, labels, strict=True)]
            api.post("/v1/models/fraud/outcomes", json={"outcomes": items}).raise_for_status()

        os.environ.setdefault("SE_OFFLINE", "true")
        options = Options()
        options.binary_location = os.environ.get("COSTWISE_CHROMIUM", "/usr/bin/chromium")
        for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                         "--disable-gpu", "--hide-scrollbars"):  # fmt: skip
            options.add_argument(argument)
        driver = webdriver.Chrome(
            service=Service(os.environ.get("COSTWISE_CHROMEDRIVER", "/usr/bin/chromedriver")),
            options=options,
        )
        try:
            metrics = {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False}

            def window(height: int) -> None:  # the page is 1280 px wide and this high
                driver.execute_cdp_cmd(
                    "Emulation.setDeviceMetricsOverride", {**metrics, "height": height}
                )

            window(800)
            driver.get(f"{url}/console")
            wait(driver, "return document.querySelector('#models button[data-model]')", "models")
            driver.find_element(By.CSS_SELECTOR, '#models button[data-model="fraud"]').click()
            wait(driver, "return document.querySelector('#versions button[data-version=\"2\"]')",
                 "versions")  # fmt: skip
            driver.find_element(By.CSS_SELECTOR, '#versions button[data-version="2"]').click()
            wait(driver, "return document.querySelector('#whatif-result').dataset.state === 'ready'"
                 " && [...document.querySelectorAll('#plots img')].length === 4"
                 " && [...document.querySelectorAll('#plots img')].every((i) => i.complete)"
                 " && document.querySelector('#monitor-panel').dataset.state === 'ready'",
                 "the plots, what-if and monitoring")  # fmt: skip
            height = driver.execute_script("return document.documentElement.scrollHeight")
            window(height)
            panel = driver.find_element(By.ID, "monitor-panel")
            top = driver.execute_script("return arguments[0].getBoundingClientRect().top", panel)
            window(int(top) - 6)
            driver.save_screenshot(str(ROOT / "docs" / "images" / "console.png"))
            window(height)
            # recalibrate version 1 (platt) from the panel, on the outcomes of the whole week
            driver.find_element(By.ID, "recalibrate-submit").click()
            wait(driver, "return document.querySelector('#recalibrate-form').dataset.state === 'ready'"
                 " && document.querySelector('#monitor-panel').dataset.state === 'ready'"
                 " && document.querySelector('#monitor-versions input[data-version=\"3\"]')",
                 "the recalibration")  # fmt: skip
            height = driver.execute_script("return document.documentElement.scrollHeight")
            window(height)
            panel.screenshot(str(ROOT / "docs" / "images" / "monitoring.png"))

            # the recalibrated version 3: its plots, derived from the held-out outcomes
            window(800)
            wait(driver, "return document.querySelector('#versions button[data-version=\"3\"]')",
                 "version 3 in the versions table")  # fmt: skip
            driver.find_element(By.CSS_SELECTOR, '#versions button[data-version="3"]').click()
            wait(driver, "return document.querySelector('#whatif-result').dataset.state === 'ready'"
                 " && document.querySelector('#plots-panel').dataset.state === 'ready'"
                 " && [...document.querySelectorAll('#plots img')].every((i) => i.complete)",
                 "the recalibrated version's plots")  # fmt: skip
            content(driver, "console-recalibrated.png")

            # a three-class model (scikit-learn's bundled wine data): the cost-matrix editor
            wine = load_wine()
            body = {"features": wine.data.tolist(), "labels": wine.target.tolist(),
                    "feature_names": [n.replace("/", "_") for n in wine.feature_names], "algorithm": "samme",
                    "n_estimators": 60}  # fmt: skip
            api.post("/v1/models/wine/versions", json=body).raise_for_status()
            driver.find_element(By.ID, "refresh-models").click()
            wait(driver, "return document.querySelector('#models button[data-model=\"wine\"]')",
                 "the wine model")  # fmt: skip
            # clicked in the page: the tables are re-rendered as answers arrive
            driver.execute_script(
                "document.querySelector('#models button[data-model=\"wine\"]').click()"
            )
            wait(driver, "return document.querySelector('#selected-model').textContent"
                 " === 'of wine' && document.querySelector('#versions-panel').dataset.state"
                 " === 'ready'", "its versions")  # fmt: skip
            driver.execute_script(
                "document.querySelector('#versions button[data-version=\"1\"]').click()"
            )
            wait(driver, "return document.querySelector('#whatif-result').dataset.state === 'ready'"
                 " && document.querySelector('#plots-panel').dataset.state === 'ready'",
                 "the three-class what-if")  # fmt: skip
            cell = driver.find_element(
                By.CSS_SELECTOR, '#cost-matrix input[data-row="2"][data-col="0"]'
            )
            cell.clear()
            cell.send_keys("10")
            wait(driver, "return document.querySelector('#whatif-result').dataset.state === 'ready'"
                 " && document.querySelector('#whatif-result').dataset.costs.includes('10')",
                 "the what-if of the edited matrix")  # fmt: skip
            content(driver, "console-multiclass.png")
        finally:
            driver.quit()
        report = api.get("/v1/models/fraud/monitoring").json()["versions"][0]
        for b in report["buckets"]:
            cal = b["calibration"] or {}
            print(b["start"][:10], b["predictions"], b["labelled"], b["observed_positive_rate"],
                  b["cost_ratio"], cal.get("ece"), b["calibration_alarm"])  # fmt: skip


if __name__ == "__main__":
    main()
