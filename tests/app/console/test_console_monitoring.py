"""The console's monitoring panel in a real headless Chromium, checked against the API.

A model serves logged predictions, outcomes come back for part of them, and the panel's
table, every plotted point (its value and where it is drawn), the reliability diagram and
the calibration flag are compared with ``GET /v1/models/{name}/monitoring``; then the
empty states (no predictions, logging off, no outcomes), errors, auth, and a
recalibration from the panel. Runs on SQLite and (when configured) PostgreSQL.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select
from sqlalchemy import create_engine, update

from app.registry.orm import LoggedPrediction
from tests.app.api.conftest import dataset
from tests.app.console.conftest import api_client, serve, wait_for
from tests.app.console.test_console_browser import (
    _register,
    _settings,
    by_id,
    click_model,
    open_console,
    state_of,
    use_key,
    value_of,
)

ADMIN_KEY = "cw_console_monitor_admin_key_0123456789"
COSTS = {"c_fp": 1, "c_fn": 5}
# chart series -> how to read it from a monitoring bucket
SERIES = {
    "predictions": lambda b: b["predictions"],
    "labelled": lambda b: b["labelled"],
    "coverage": lambda b: b["coverage"],
    "predicted_positive_rate": lambda b: b["predicted_positive_rate"],
    "observed_positive_rate": lambda b: b["observed_positive_rate"],
    "realised_cost": lambda b: b["realised_cost"],
    "expected_cost": lambda b: b["expected_cost"],
    "cost_ratio": lambda b: b["cost_ratio"],
    "brier": lambda b: (b["calibration"] or {}).get("brier"),
    "log_loss": lambda b: (b["calibration"] or {}).get("log_loss"),
    "ece": lambda b: (b["calibration"] or {}).get("ece"),
}
CHARTS = {
    "volume": ["predictions", "labelled"],
    "coverage": ["coverage"],
    "rate": ["predicted_positive_rate", "observed_positive_rate"],
    "cost": ["realised_cost", "expected_cost"],
    "ratio": ["cost_ratio"],
    "scores": ["brier", "log_loss"],
    "ece": ["ece"],
}
SUMMARY = {
    **{k: SERIES[k] for k in SERIES if k not in ("brier", "log_loss", "ece")},
    "brier": SERIES["brier"],
    "log_loss": SERIES["log_loss"],
    "ece": SERIES["ece"],
}
READ_CHARTS = """
return [...document.querySelectorAll(arguments[0])].map((f) => {
  const s = f.querySelector('svg');
  const points = (sel) => s ? [...s.querySelectorAll(sel)].map((c) => ({
    series: c.dataset.series || null, version: Number(c.dataset.version),
    start: c.dataset.start || null, bin: c.dataset.bin === undefined ? null : Number(c.dataset.bin),
    x: c.dataset.x === undefined ? null : Number(c.dataset.x),
    value: c.dataset.value === undefined ? null : Number(c.dataset.value),
    count: c.dataset.count === undefined ? null : Number(c.dataset.count),
    cx: Number(c.getAttribute('cx')), cy: Number(c.getAttribute('cy')),
  })) : [];
  return {
    chart: f.dataset.chart, state: f.dataset.state || 'drawn',
    empty: f.querySelector('.chart-empty')?.textContent || null,
    scale: s ? Object.fromEntries(Object.entries(s.dataset).map(([k, v]) => [k, Number(v)])) : null,
    points: points('circle.point'), markers: points('circle.alarm-marker'),
  };
});
"""


def _wait_logged(api: httpx.Client, name: str, n: int) -> None:
    """Until the log writer has written ``n`` predictions of ``name`` (off the request path)."""
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        r = api.get(f"/v1/models/{name}/monitoring")
        if (
            r.status_code == 200
            and sum(v["total"]["predictions"] for v in r.json()["versions"]) == n
        ):
            return
        time.sleep(0.05)
    pytest.fail(f"{n} predictions of {name} were not logged")


def _predict(api: httpx.Client, name: str, rows: list[list[float]], version: int) -> list[str]:
    body = {"instances": rows, "costs": COSTS, "version": version}
    r = api.post(f"/v1/models/{name}/predict", json=body)
    assert r.status_code == 200, r.text
    return [p["id"] for p in r.json()["predictions"]]


def _outcomes(api: httpx.Client, name: str, ids: list[str], labels: list[int]) -> None:
    items = [{"id": i, "label": int(label)} for i, label in zip(ids, labels, strict=True)]
    r = api.post(f"/v1/models/{name}/outcomes", json={"outcomes": items})
    assert r.status_code == 200 and r.json()["counts"]["recorded"] == len(ids), r.text


@pytest.fixture
def monitored(database_url: str) -> Iterator[tuple[str, httpx.Client, dict[str, Any]]]:
    """Auth on; model 'fraud' v1 and v2. v1 served three days of traffic (the log's times
    moved back by the test): day -2 all labelled with the true labels, day -1 half labelled
    with the labels flipped (miscalibrated), today none labelled. v2 served one unlabelled
    batch today; model 'quiet' served nothing."""
    settings = _settings(database_url, auth="on", bootstrap_admin_key=ADMIN_KEY)
    with serve(settings) as url, api_client(url, ADMIN_KEY) as admin:
        _register(admin, "fraud", n_estimators=30)
        _register(admin, "fraud", n_estimators=10)
        _register(admin, "quiet", n_estimators=5)
        X, y = dataset(900, seed=0)
        days = []
        for day in range(3):
            rows = slice(day * 300, day * 300 + 300)
            days.append((_predict(admin, "fraud", X[rows].tolist(), 1), y[rows].tolist()))
        _predict(admin, "fraud", X[:50].tolist(), 2)
        _wait_logged(admin, "fraud", 950)
        engine = create_engine(database_url)
        now = datetime.now(UTC)
        try:
            with engine.begin() as conn:
                for back, (ids, _) in zip((2, 1), days[:2], strict=True):
                    conn.execute(
                        update(LoggedPrediction)
                        .where(LoggedPrediction.prediction_id.in_(ids))
                        .values(created_at=now - timedelta(days=back))
                    )
        finally:
            engine.dispose()
        _outcomes(admin, "fraud", *days[0])
        _outcomes(admin, "fraud", days[1][0][:150], [1 - v for v in days[1][1][:150]])
        r = admin.post("/v1/keys", json={"name": "viewer", "role": "reader"})
        assert r.status_code == 201, r.text
        yield url, admin, {"reader": r.json()["key"]}


def monitor_settled(driver: WebDriver) -> None:
    wait_for(driver, lambda d: state_of(d, "monitor-panel") in ("ready", "error"), "monitoring")


def reload_monitor(driver: WebDriver) -> None:
    """Press Refresh and wait for the panel to settle (its state goes through loading)."""
    driver.execute_script("document.querySelector('#monitor-panel').dataset.state = 'stale'")
    by_id(driver, "monitor-load").click()
    monitor_settled(driver)


def charts(
    driver: WebDriver, selector: str = "#monitor-charts figure, #monitor-ece figure"
) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = driver.execute_script(READ_CHARTS, selector)
    return result


def ts(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000


def check_charts_against(driver: WebDriver, report: dict[str, Any]) -> list[dict[str, Any]]:
    """Every time-series point is the API's figure for its version, bucket and series, drawn
    where the chart's scale puts it; every non-null API figure is plotted; a chart whose
    figures are all null says why instead."""
    shown = charts(driver)
    assert [c["chart"] for c in shown] == list(CHARTS)
    for chart in shown:
        expected = {
            (series, v["version"], b["start"]): SERIES[series](b)
            for series in CHARTS[chart["chart"]]
            for v in report["versions"]
            for b in v["buckets"]
            if SERIES[series](b) is not None
        }
        if not expected:
            assert chart["state"] == "empty" and chart["points"] == [], chart
            continue
        assert chart["state"] == "drawn", chart
        got = {(p["series"], p["version"], p["start"]): p["value"] for p in chart["points"]}
        assert got == expected, chart["chart"]
        s = chart["scale"]
        assert s["yMin"] <= min(expected.values()) and max(expected.values()) <= s["yMax"]
        for p in chart["points"]:
            y = s["bottom"] - (p["value"] - s["yMin"]) / (s["yMax"] - s["yMin"]) * (
                s["bottom"] - s["top"]
            )
            x = s["left"] + (ts(p["start"]) - s["tMin"]) / (s["tMax"] - s["tMin"]) * (
                s["right"] - s["left"]
            )
            assert p["cy"] == pytest.approx(y, abs=1e-6) and p["cx"] == pytest.approx(x, abs=1e-6)
    return shown


def check_summary(driver: WebDriver, report: dict[str, Any]) -> None:
    rows = driver.find_elements(By.CSS_SELECTOR, "#monitor-summary tbody tr")
    assert [int(r.get_attribute("data-version") or 0) for r in rows] == [
        v["version"] for v in report["versions"]
    ]
    for row, v in zip(rows, report["versions"], strict=True):
        for field, read in SUMMARY.items():
            cell = row.find_element(By.CSS_SELECTOR, f'[data-field="{field}"]')
            expected = read(v["total"])
            if expected is None:
                assert cell.get_attribute("data-value") is None and cell.text == "–", field
            else:
                assert value_of(cell) == expected, field


def check_calibration(driver: WebDriver, figures: dict[int, dict[str, Any] | None]) -> None:
    """The reliability diagram's dots and the flag table are the API's for ``figures``
    (per version: the figures of the whole range or of the selected bucket)."""
    (diagram,) = charts(driver, "#monitor-calibration figure")
    expected = {}
    for version, f in figures.items():
        if f is None or f["calibration"] is None:
            continue
        bins = f["calibration"]["reliability"]
        for i, n in enumerate(bins["count"]):
            if n:
                expected[(version, i)] = (bins["mean_predicted"][i], bins["observed"][i], n)
    got = {(p["version"], p["bin"]): (p["x"], p["value"], p["count"]) for p in diagram["points"]}
    assert got == expected
    if not expected:
        assert diagram["state"] == "empty" and "No labelled predictions" in diagram["empty"]
    for version, f in figures.items():
        row = driver.find_element(By.CSS_SELECTOR, f'#monitor-flags tr[data-version="{version}"]')
        flag = row.find_element(By.CSS_SELECTOR, '[data-field="flag"]')
        if f is None:
            assert row.get_attribute("data-state") == "no-predictions"
            continue
        if f["calibration"] is None:
            assert row.get_attribute("data-state") == "unlabelled"
            assert flag.text == "no labelled predictions: no test"
            continue
        p_value = f["calibration"]["spiegelhalter"]["p_value"]
        state = "alarm" if f["calibration_alarm"] else "ok"
        assert row.get_attribute("data-state") == state
        assert flag.text == ("✗ miscalibrated" if state == "alarm" else "✓ calibrated")
        cell = row.find_element(By.CSS_SELECTOR, '[data-field="p_value"]')
        assert value_of(cell) == p_value
        assert cell.text == (f"{p_value:.1e}" if 0 < p_value < 1e-4 else f"{p_value:.4f}")
        cox = row.find_element(By.CSS_SELECTOR, '[data-field="cox_p_value"]')
        assert value_of(cox) == f["calibration"]["cox"]["p_value"]
        alarm = f["calibration"]["alarm"]
        assert alarm["fired"] is f["calibration_alarm"] and alarm["correction"] == "bonferroni"
        assert value_of(row.find_element(By.CSS_SELECTOR, '[data-field="n"]')) == f["labelled"]


def test_monitoring_panel_plots_the_apis_numbers(
    browser: WebDriver, monitored: tuple[str, httpx.Client, dict[str, Any]], tmp_path: Path
) -> None:
    url, admin, keys = monitored
    open_console(browser, url)
    use_key(browser, keys["reader"])  # monitoring needs only the reader role
    click_model(browser, "fraud")
    monitor_settled(browser)
    assert state_of(browser, "monitor-panel") == "ready", by_id(browser, "monitor-error").text

    # daily buckets, both versions (the default): three days of v1, today's v2
    report = admin.get("/v1/models/fraud/monitoring", params={"bucket": "day"}).json()
    assert [len(v["buckets"]) for v in report["versions"]] == [3, 1]
    check_summary(browser, report)
    shown = {c["chart"]: c for c in check_charts_against(browser, report)}
    # the flipped labels of day -1 fail the calibration test: its ECE point is ringed
    v1 = report["versions"][0]
    assert v1["buckets"][1]["calibration_alarm"] is True
    ringed = {(m["version"], m["start"]) for m in shown["ece"]["markers"]}
    assert ringed == {
        (v["version"], b["start"]) for v in report["versions"] for b in v["buckets"]
        if b["calibration_alarm"]
    }  # fmt: skip
    assert (1, v1["buckets"][1]["start"]) in ringed
    assert by_id(browser, "monitor-unlabelled").is_displayed() is False
    check_calibration(browser, {v["version"]: v["total"] for v in report["versions"]})

    # the reliability diagram and test of one bucket: day -1 (alarm), today (no labels)
    select = Select(by_id(browser, "monitor-reliability-bucket"))
    assert [o.get_attribute("value") for o in select.options] == [""] + [
        b["start"] for b in v1["buckets"]
    ]
    for b in v1["buckets"]:
        select.select_by_value(b["start"])
        v2 = next((x for x in report["versions"][1]["buckets"] if x["start"] == b["start"]), None)
        check_calibration(browser, {1: b, 2: v2})
    browser.save_screenshot(str(tmp_path / "monitoring.png"))

    # hourly buckets of v1 only (the API filters by version)
    Select(by_id(browser, "monitor-bucket")).select_by_value("hour")
    browser.find_element(By.CSS_SELECTOR, '#monitor-versions input[data-version="2"]').click()
    monitor_settled(browser)
    wait_for(
        browser,
        lambda d: len(d.find_elements(By.CSS_SELECTOR, "#monitor-summary tbody tr")) == 1,
        "v1 only",
    )
    hourly = admin.get(
        "/v1/models/fraud/monitoring", params={"bucket": "hour", "version": 1}
    ).json()
    check_summary(browser, hourly)
    check_charts_against(browser, hourly)

    # a window: the last 24 hours hold only today's (unlabelled) predictions
    Select(by_id(browser, "monitor-range")).select_by_value("24h")
    monitor_settled(browser)
    wait_for(browser, lambda d: by_id(d, "monitor-unlabelled").is_displayed(), "no labels")
    assert "No labelled predictions in this range" in by_id(browser, "monitor-unlabelled").text
    since = (datetime.now(UTC) - timedelta(hours=24)).isoformat()
    day = admin.get(
        "/v1/models/fraud/monitoring", params={"bucket": "hour", "version": 1, "since": since}
    ).json()
    assert day["versions"][0]["total"]["labelled"] == 0
    check_summary(browser, day)
    empty = {c["chart"]: c for c in check_charts_against(browser, day)}
    for chart in ("cost", "ratio", "scores", "ece"):
        assert empty[chart]["state"] == "empty"
        assert empty[chart]["empty"].startswith("No labelled predictions in this range")
    assert not by_id(browser, "recalibrate-form").is_displayed()

    # errors read as the API's: a custom window that ends before it starts
    Select(by_id(browser, "monitor-range")).select_by_value("custom")
    browser.execute_script(
        "arguments[0].value = '2026-01-02T00:00'; arguments[1].value = '2026-01-01T00:00';"
        "arguments[1].dispatchEvent(new Event('change'));",
        by_id(browser, "monitor-since"),
        by_id(browser, "monitor-until"),
    )
    wait_for(browser, lambda d: state_of(d, "monitor-panel") == "error", "the 422")
    error = by_id(browser, "monitor-error").text
    assert error.startswith("422 ") and ": since: " in error and "(field: since)" in error


def test_monitoring_panel_recalibrates_from_outcomes_as_admin(
    browser: WebDriver, monitored: tuple[str, httpx.Client, dict[str, Any]]
) -> None:
    url, admin, keys = monitored
    open_console(browser, url)
    use_key(browser, keys["reader"])
    click_model(browser, "fraud")
    monitor_settled(browser)
    form = by_id(browser, "recalibrate-form")
    assert form.is_displayed()
    # only versions with labelled predictions can be recalibrated from outcomes
    options = Select(by_id(browser, "recalibrate-version")).options
    assert [o.get_attribute("value") for o in options] == ["1"]
    assert options[0].text == "v1 (450 labelled)"
    by_id(browser, "recalibrate-submit").click()  # a reader may not: the API's 403, shown
    wait_for(browser, lambda d: state_of(d, "recalibrate-form") == "error", "the 403")
    assert by_id(browser, "recalibrate-message").text.startswith("403 FORBIDDEN: ")
    assert admin.get("/v1/models/fraud").json()["latest_version"] == 2

    use_key(browser, ADMIN_KEY)
    click_model(browser, "fraud")
    monitor_settled(browser)
    Select(by_id(browser, "recalibrate-method")).select_by_value("isotonic")
    by_id(browser, "recalibrate-submit").click()
    wait_for(browser, lambda d: state_of(d, "recalibrate-form") in ("ready", "error"), "recal")
    message = by_id(browser, "recalibrate-message")
    assert state_of(browser, "recalibrate-form") == "ready", message.text
    assert message.get_attribute("data-version") == "3"
    created = admin.get("/v1/models/fraud/versions/3").json()
    assert created["calibration"]["method"] == "isotonic"
    assert created["calibration"]["parent_version"] == 1
    n_fit, n_held = created["calibration"]["n_calibration"], created["calibration"]["n_holdout"]
    assert n_fit + n_held == 450
    assert message.text == (
        f"Created v3: isotonic map over v1's booster, fitted on {n_fit} labelled "
        f"predictions; measured on {n_held} held out:"
    )
    metrics = created["metrics"]["recalibration"]
    for key, read in {
        "brier": lambda m: m["brier"],
        "log_loss": lambda m: m["log_loss"],
        "ece": lambda m: m["ece"],
        "p_value": lambda m: m["spiegelhalter"]["p_value"],
    }.items():
        row = browser.find_element(By.CSS_SELECTOR, f'#recalibrate-metrics tr[data-metric="{key}"]')
        for when in ("before", "after"):
            cell = row.find_element(By.CSS_SELECTOR, f'[data-field="{when}"]')
            assert value_of(cell) == read(metrics[when]), (key, when)
    # the new version is listed (versions table and the monitoring's version choice)
    wait_for(
        browser,
        lambda d: d.find_elements(By.CSS_SELECTOR, '#versions tbody tr[data-version="3"]'),
        "v3 in the versions table",
    )
    wait_for(
        browser,
        lambda d: d.find_elements(By.CSS_SELECTOR, '#monitor-versions input[data-version="3"]'),
        "v3 in the monitoring versions",
    )


def test_monitoring_panel_empty_states_and_errors(
    browser: WebDriver, monitored: tuple[str, httpx.Client, dict[str, Any]]
) -> None:
    url, admin, _ = monitored
    open_console(browser, url)
    assert by_id(browser, "monitor-hint").text == "Select a model."
    use_key(browser, ADMIN_KEY)

    # no predictions logged: how to log them and send outcomes
    click_model(browser, "quiet")
    monitor_settled(browser)
    box = by_id(browser, "monitor-empty")
    assert box.is_displayed() and box.get_attribute("data-reason") == "no-predictions", (
        state_of(browser, "monitor-panel"),
        by_id(browser, "monitor-error").text,
        box.get_attribute("outerHTML"),
    )
    assert box.text.startswith("No logged predictions of quiet yet.")
    for needle in (
        "POST /v1/models/quiet/predict",
        "COSTWISE_PREDICTION_LOG=false",
        "POST /v1/models/quiet/outcomes",
        "costwise outcomes send FILE.csv --model quiet",
    ):
        assert needle in box.text
    assert not by_id(browser, "monitor-result").is_displayed()

    # logging switched off for the model: said so, with how to turn it on
    r = admin.patch("/v1/models/quiet", json={"prediction_log": False})
    assert r.status_code == 200, r.text
    reload_monitor(browser)
    assert by_id(browser, "monitor-empty").get_attribute("data-reason") == "log-off"
    assert 'PATCH /v1/models/quiet {"prediction_log": true}' in by_id(browser, "monitor-empty").text

    # versions chosen: v2 only (logged, today), then none (nothing asked)
    click_model(browser, "fraud")
    monitor_settled(browser)
    browser.find_element(By.CSS_SELECTOR, '#monitor-versions input[data-version="1"]').click()
    monitor_settled(browser)
    wait_for(
        browser,
        lambda d: [r.get_attribute("data-version") for r in d.find_elements(
            By.CSS_SELECTOR, "#monitor-summary tbody tr")] == ["2"],
        "v2 only",
    )  # fmt: skip
    browser.find_element(By.CSS_SELECTOR, '#monitor-versions input[data-version="2"]').click()
    monitor_settled(browser)
    assert by_id(browser, "monitor-empty").get_attribute("data-reason") == "no-version"

    # a version that never served, chosen alone: the API's 404 naming the logged versions
    _register(admin, "fraud", n_estimators=5)  # v3
    click_model(browser, "fraud")  # reloads the versions: v1, v2 stay unchecked
    monitor_settled(browser)
    assert state_of(browser, "monitor-panel") == "error"
    expected = admin.get("/v1/models/fraud/monitoring", params={"version": 3})
    assert expected.status_code == 404
    assert by_id(browser, "monitor-error").text == (
        f"404 NOT_FOUND: {expected.json()['detail'].rstrip('.')} (field: version)."
    )
    assert not by_id(browser, "monitor-result").is_displayed()


def test_monitoring_panel_of_a_three_class_model(browser: WebDriver, database_url: str) -> None:
    """Class shares instead of a positive rate; no binary calibration test: said so."""
    from sklearn.datasets import make_classification

    X, y = make_classification(
        600, 5, n_informative=4, n_redundant=1, n_classes=3, n_clusters_per_class=1,
        random_state=4,
    )  # fmt: skip
    names = ["low", "mid", "high"]
    with serve(_settings(database_url)) as url, api_client(url) as api:
        body = {"features": X[:300].round(4).tolist(), "labels": [names[v] for v in y[:300]],
                "algorithm": "samme", "n_estimators": 10}  # fmt: skip
        assert api.post("/v1/models/tri/versions", json=body).status_code == 201
        matrix = [[0, 1, 9], [4, 0, 1], [2, 2, 0]]
        r = api.post(
            "/v1/models/tri/predict",
            json={"instances": X[300:].round(4).tolist(), "cost_matrix": matrix},
        )
        assert r.status_code == 200, r.text
        ids = [p["id"] for p in r.json()["predictions"]]
        _wait_logged(api, "tri", 300)
        items = [{"id": i, "label": names[v]} for i, v in zip(ids[:200], y[300:500], strict=True)]
        assert api.post("/v1/models/tri/outcomes", json={"outcomes": items}).status_code == 200

        open_console(browser, url)
        click_model(browser, "tri")
        monitor_settled(browser)
        assert state_of(browser, "monitor-panel") == "ready", by_id(browser, "monitor-error").text
        report = api.get("/v1/models/tri/monitoring", params={"bucket": "day"}).json()
        (v,) = report["versions"]
        assert v["classes"] == sorted(names) and v["total"]["predicted_positive_rate"] is None
        check_summary(browser, report)
        (rate,) = [c for c in charts(browser) if c["chart"] == "rate"]
        expected = {
            (f"{kind}_shares.{k}", 1, b["start"]): b[f"{kind}_shares"][k]
            for kind in ("predicted", "observed")
            for b in v["buckets"]
            for k in range(3)
        }
        assert {(p["series"], p["version"], p["start"]): p["value"] for p in rate["points"]} == (
            expected
        )
        assert (
            "Class shares"
            in browser.find_element(
                By.CSS_SELECTOR, '#monitor-charts figure[data-chart="rate"] figcaption'
            ).text
        )
        assert v["total"]["calibration_alarm"] is None
        row = browser.find_element(By.CSS_SELECTOR, '#monitor-flags tr[data-version="1"]')
        assert row.get_attribute("data-state") == "no-test"
        ece = row.find_element(By.CSS_SELECTOR, '[data-field="ece"]')
        assert value_of(ece) == v["total"]["calibration"]["ece"]


def test_monitoring_panel_lists_decisions_per_action(browser: WebDriver, database_url: str) -> None:
    """Rows decided among actions (review beside the classes): the panel's per-action table
    is the monitoring's ``total.actions`` of each version, figure by figure; a version
    whose rows were all class decisions adds no row, and a model without any action hides
    the table."""
    settings = _settings(database_url)
    with serve(settings) as url, api_client(url) as admin:
        _register(admin, "screen", n_estimators=20)
        _register(admin, "plain", n_estimators=5)
        X, y = dataset(400, seed=3)
        r = admin.post(
            "/v1/models/screen/predict",
            json={"instances": X[:300].tolist(), "costs": {**COSTS, "c_review": 0.4}},
        )
        assert r.status_code == 200, r.text
        taken = {p["action"] for p in r.json()["predictions"]}
        assert {"review", "negative"} <= taken, taken  # the band sends some rows to review
        ids = [p["id"] for p in r.json()["predictions"]]
        _predict(admin, "screen", X[300:].tolist(), 1)  # class decisions of the same version
        _predict(admin, "plain", X[:40].tolist(), 1)
        _wait_logged(admin, "screen", 400)
        _wait_logged(admin, "plain", 40)
        _outcomes(admin, "screen", ids[:200], y[:200].tolist())

        open_console(browser, url)
        click_model(browser, "screen")
        monitor_settled(browser)
        assert state_of(browser, "monitor-panel") == "ready", by_id(browser, "monitor-error").text
        report = admin.get("/v1/models/screen/monitoring").json()
        (version,) = report["versions"]
        actions = version["total"]["actions"]
        assert {a["action"] for a in actions} == taken
        assert sum(a["taken"] for a in actions) == 300  # the 100 class decisions are not counted
        assert sum(a["labelled"] for a in actions) == 200
        table = by_id(browser, "monitor-actions")
        assert table.is_displayed()
        rows = table.find_elements(By.CSS_SELECTOR, "tbody tr")
        assert [
            (r.get_attribute("data-version"), r.get_attribute("data-action")) for r in rows
        ] == [(str(version["version"]), a["action"]) for a in actions]
        for row, a in zip(rows, actions, strict=True):
            for field in ("taken", "share", "labelled", "realised_cost", "mean_realised_cost",
                          "expected_cost"):  # fmt: skip
                cell = row.find_element(By.CSS_SELECTOR, f'[data-field="{field}"]')
                if a[field] is None:
                    assert cell.get_attribute("data-value") is None and cell.text == "–", field
                else:
                    assert value_of(cell) == a[field], (a["action"], field)
        check_summary(browser, report)

        click_model(browser, "plain")
        monitor_settled(browser)
        wait_for(browser, lambda d: not by_id(d, "monitor-actions").is_displayed(), "no actions")
        assert (
            admin.get("/v1/models/plain/monitoring").json()["versions"][0]["total"]["actions"]
            is None
        )
        assert not browser.find_elements(By.CSS_SELECTOR, "#monitor-actions tbody tr")
