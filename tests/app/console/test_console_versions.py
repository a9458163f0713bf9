"""The console for the three kinds of version a user meets, in headless Chromium: a
two-class version (sliders), a three-class one (a K x K cost-matrix editor, no sliders,
no 422) and a recalibrated one (its plots, derived from the recalibration's held-out
outcomes, and no red 404). Every number shown is compared with the API's; the versions
table says which rows each metric was measured on and shows each figure in one format."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from typing import Any

import httpx
import numpy as np
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from sqlalchemy import create_engine, delete, select

from app.registry.orm import ModelVersion, RegisteredModel, VersionPlot
from app.settings import Settings
from tests.app.api.conftest import dataset, train_body
from tests.app.console.conftest import api_client, serve, wait_for
from tests.app.console.test_console_browser import (
    by_id,
    check_whatif,
    click_model,
    click_version,
    open_console,
    open_version,
    settled,
    show_version,
    state_of,
    value_of,
    whatif_answered,
)

FOUR_DECIMALS = re.compile(r"^-?\d+\.\d{4}$")


def _three_classes(n: int = 450, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    X, _ = dataset(n, seed=seed)
    score = X[:, 0] + 0.5 * X[:, 1]
    y = np.digitize(score, np.quantile(score, [1 / 3, 2 / 3]))  # classes 0, 1, 2
    return X, y


@pytest.fixture
def live(database_url: str) -> Iterator[tuple[str, httpx.Client, str]]:
    """Models 'fraud' (v1 cross-fitted, v2 held out, v3 recalibrated from outcomes) and
    'tri' (three classes)."""
    settings = Settings(database_url=database_url, max_train_rows=5000, max_rounds=500)
    with serve(settings) as url, api_client(url) as api:
        r = api.post("/v1/models/fraud/versions", json=train_body(n=600, n_estimators=20))
        assert r.status_code == 201, r.text
        r = api.post(
            "/v1/models/fraud/versions",
            json=train_body(n=600, n_estimators=20, evaluation_fraction=0.25),
        )
        assert r.status_code == 201, r.text
        X, y = dataset(400, seed=7)
        ids = [f"t{i}" for i in range(len(y))]
        r = api.post("/v1/models/fraud/predict", json={"instances": X.tolist(), "ids": ids,
                                                       "version": 1})  # fmt: skip
        assert r.status_code == 200, r.text
        deadline = time.monotonic() + 15
        while True:  # the log writer is a batch behind the answer
            body = {"outcomes": [{"id": i, "label": int(v)} for i, v in zip(ids, y, strict=True)]}
            counts = api.post("/v1/models/fraud/outcomes", json=body).json()["counts"]
            if counts["recorded"] + counts["unchanged"] == len(ids):
                break
            assert time.monotonic() < deadline, counts
            time.sleep(0.2)
        r = api.post("/v1/models/fraud/versions/1/recalibrate", json={"from_outcomes": {}})
        assert r.status_code == 201, r.text
        assert r.json()["version"] == 3 and r.json()["parent_version"] == 1
        X3, y3 = _three_classes()
        r = api.post("/v1/models/tri/versions", json={
            "features": X3.tolist(), "labels": y3.tolist(), "algorithm": "samme",
            "n_estimators": 20})  # fmt: skip
        assert r.status_code == 201, r.text
        yield url, api, database_url


def _no_red(driver: WebDriver) -> None:
    for element_id in ("plots-error", "whatif-error", "versions-error"):
        element = by_id(driver, element_id)
        assert not element.is_displayed(), f"{element_id}: {element.text}"


def test_two_class_versions_table_says_where_each_metric_comes_from(
    browser: WebDriver, live: tuple[str, httpx.Client, str]
) -> None:
    url, api, _ = live
    open_console(browser, url)
    click_model(browser, "fraud")
    versions = {v["version"]: v for v in api.get("/v1/models/fraud/versions").json()["versions"]}
    expected = {
        1: f"out of fold ({versions[1]['metrics']['n_evaluation']:,} rows)",
        2: f"held out ({versions[2]['metrics']['n_evaluation']:,} rows)",
        3: f"held out of recalibration ({versions[3]['metrics']['n_evaluation']:,} rows)",
    }
    assert versions[1]["metrics"]["evaluation"] == "out_of_fold"
    for number, text in expected.items():
        row = browser.find_element(By.CSS_SELECTOR, f'#versions tr[data-version="{number}"]')
        assert row.find_element(By.CSS_SELECTOR, '[data-field="evaluation"]').text == text
        # one format per row: every metric with four decimals (1 is "1.0000", not "1")
        for metric in ("brier", "auc", "accuracy"):
            cell = row.find_element(By.CSS_SELECTOR, f'[data-metric="{metric}"]')
            if cell.get_attribute("data-value") is not None:
                assert FOUR_DECIMALS.match(cell.text), (number, metric, cell.text)
                assert value_of(cell) == versions[number]["metrics"][metric]
    # nothing clipped: the table fits the panel at 1280 px and each cell shows all its text
    api.put("/v1/models/fraud/aliases/production", json={"version": 3}).raise_for_status()
    api.put("/v1/models/fraud/aliases/candidate-long-name", json={"version": 3}).raise_for_status()
    click_model(browser, "fraud")
    wait_for(
        browser,
        lambda d: (
            "candidate-long-name"
            in d.find_element(
                By.CSS_SELECTOR, '#versions tr[data-version="3"] [data-field="aliases"]'
            ).text
        ),
        "the aliases",
    )
    fits = browser.execute_script(
        "const p = document.querySelector('#versions-panel');"
        "const cells = [...document.querySelectorAll('#versions td, #models td')];"
        "return [p.scrollWidth <= p.clientWidth,"
        " cells.filter((c) => c.scrollWidth > c.clientWidth + 1).map((c) => c.textContent)];"
    )
    assert fits == [True, []]

    # a two-class version: the sliders, and the API's numbers
    show_version(browser, 1)
    assert by_id(browser, "whatif-binary").is_displayed()
    assert not by_id(browser, "whatif-matrix").is_displayed()
    check_whatif(browser, api, "fraud", 1)
    _no_red(browser)


def _matrix_shown(driver: WebDriver, matrix: list[list[float]]) -> list[list[float]]:
    whatif_answered(
        driver, lambda shown: json.loads(shown or "null") == matrix, f"the what-if for {matrix}"
    )
    k = len(matrix)
    return [[value_of(by_id(driver, f"cmk-{i}-{j}")) for j in range(k)] for i in range(k)]


def _api_matrix(api: httpx.Client, matrix: list[list[float]]) -> dict[str, Any]:
    r = api.get(
        "/v1/models/tri/versions/1/whatif/matrix", params={"cost_matrix": json.dumps(matrix)}
    )
    assert r.status_code == 200, r.text
    return dict(r.json())


def test_three_class_version_edits_a_cost_matrix(
    browser: WebDriver, live: tuple[str, httpx.Client, str]
) -> None:
    url, api, _ = live
    open_version(browser, url, "tri", 1)
    # no sliders, no 2x2 matrix, no threshold: a 3 x 3 editor and a 3 x 3 confusion matrix
    assert not by_id(browser, "whatif-binary").is_displayed()
    assert not by_id(browser, "confusion-matrix").is_displayed()
    assert not by_id(browser, "whatif-threshold").is_displayed()
    inputs = browser.find_elements(By.CSS_SELECTOR, "#cost-matrix input")
    assert len(inputs) == 9
    zero_one = [[0.0, 1.0, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 0.0]]
    shown = _matrix_shown(browser, zero_one)
    answer = _api_matrix(api, zero_one)
    assert shown == answer["confusion_matrix"]
    assert value_of(by_id(browser, "whatif-mean-cost")) == answer["mean_cost"]
    assert value_of(by_id(browser, "whatif-accuracy")) == answer["accuracy"]
    assert value_of(by_id(browser, "whatif-n")) == answer["n"]
    _no_red(browser)

    # deciding class 0 when the truth is 2 now costs 20: fewer rows are decided 0
    cell = browser.find_element(By.CSS_SELECTOR, '#cost-matrix input[data-row="2"][data-col="0"]')
    cell.clear()
    cell.send_keys("20")
    costly = [[0.0, 1.0, 1.0], [1.0, 0.0, 1.0], [20.0, 1.0, 0.0]]
    shown = _matrix_shown(browser, costly)
    answer2 = _api_matrix(api, costly)
    assert shown == answer2["confusion_matrix"]
    assert value_of(by_id(browser, "whatif-total-cost")) == answer2["total_cost"]
    decided_0 = [sum(row[0] for row in m) for m in (answer["confusion_matrix"], shown)]
    assert decided_0[1] < decided_0[0]
    _no_red(browser)


def test_recalibrated_version_shows_its_plots_and_no_red_404(
    browser: WebDriver, live: tuple[str, httpx.Client, str]
) -> None:
    url, api, database_url = live
    open_version(browser, url, "fraud", 3)
    plots = api.get("/v1/models/fraud/versions/3/plots").json()["plots"]
    kinds = [i.get_attribute("data-kind") for i in browser.find_elements(By.CSS_SELECTOR,
                                                                        "#plots img")]  # fmt: skip
    assert kinds == [p["kind"] for p in plots]
    assert {"reliability", "roc", "cost_curve", "brier_curve"} <= set(kinds)
    check_whatif(browser, api, "fraud", 3)
    _no_red(browser)

    # a recalibrated version without stored plots (registered before they were derived):
    # a neutral note naming the reason and a link to the parent's plots, no red error
    engine = create_engine(database_url)
    with engine.begin() as conn:
        model_id = conn.execute(
            select(RegisteredModel.id).where(RegisteredModel.name == "fraud")
        ).scalar_one()
        version_id = conn.execute(
            select(ModelVersion.id).where(
                ModelVersion.model_id == model_id, ModelVersion.version == 3
            )
        ).scalar_one()
        conn.execute(delete(VersionPlot).where(VersionPlot.version_id == version_id))
    engine.dispose()
    show_version(browser, 2)
    click_version(browser, 3)
    wait_for(browser, lambda d: state_of(d, "plots-panel") in ("empty", "error"), "plots")
    assert state_of(browser, "plots-panel") == "empty"
    wait_for(browser, lambda d: state_of(d, "whatif-result") in ("empty", "error"), "what-if")
    assert state_of(browser, "whatif-result") == "empty"
    _no_red(browser)
    note = by_id(browser, "plots-note")
    detail = api.get("/v1/models/fraud/versions/3/plots").json()["detail"]
    assert note.is_displayed() and detail.rstrip(".") in note.text
    assert "recalibration of version 1" in detail  # not "registered before plots existed"
    by_id(browser, "plots-note").find_element(By.CSS_SELECTOR, 'button[data-parent="1"]').click()
    settled(browser, "plots-panel", "plots-error")
    assert browser.find_elements(By.CSS_SELECTOR, "#plots img")
    assert by_id(browser, "selected-version").text == "of fraud v1"


def test_axis_ticks_never_repeat_after_rounding(
    browser: WebDriver, live: tuple[str, httpx.Client, str]
) -> None:
    url, _, _ = live
    open_console(browser, url)
    labels = browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "Promise.all([import('./console/static/chart.js'), import('./console/static/dom.js')])"
        ".then(([chart, dom]) => done([[0, 0.012], [0, 0.9], [0, 7], [0, 1234], [0.001, 0.0042]]"
        "  .map(([lo, hi]) => { const t = chart.ticks(lo, hi);"
        "    const d = dom.tickDecimals(t); return t.map((v) => dom.formatNumber(v, d)); })));"
    )
    for row in labels:
        assert len(row) >= 2 and len(set(row)) == len(row), row
        assert len({len(label.split(".")[-1]) if "." in label else 0 for label in row}) == 1, row
    assert labels[0][:3] == ["0.0000", "0.0025", "0.0050"]
