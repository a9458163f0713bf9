"""The console's comparison panel in a real headless Chromium, checked against the API:
a champion served under ``production`` with a challenger in shadow, outcomes reported,
then the panel's verdict, interval (its figures and where it is drawn), each side's
figures, the disagreements and both sides' cost per day equal ``GET
/v1/models/{name}/compare``; a version compared with itself shows the API's 422. The
promote button asks the gate: a reader's key gets the 403, a rule the evidence does not
meet the 409 with each check shown, a rule it meets moves the alias."""

from __future__ import annotations

import time

import httpx
import numpy as np
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select

from tests.app.api.conftest import FEATURES, dataset
from tests.app.console.conftest import api_client, serve, wait_for
from tests.app.console.test_console_browser import (
    _settings,
    by_id,
    click_model,
    open_console,
    settled,
    state_of,
    use_key,
    value_of,
)

X, Y = dataset(7000, seed=11)


def _train(api: httpx.Client, rows: slice, rounds: int) -> int:
    body = {"features": X[rows].tolist(), "labels": Y[rows].tolist(), "feature_names": FEATURES,
            "algorithm": "adaboost", "n_estimators": rounds, "calibration": "platt"}  # fmt: skip
    r = api.post("/v1/models/fraud/versions", json=body)
    assert r.status_code == 201, r.text
    return int(r.json()["version"])


def _shadowed_traffic(api: httpx.Client) -> dict[str, object]:
    """v1 (100 rows, 3 rounds) serves under production, v2 (4,000 rows, 60 rounds: known
    better) in shadow; 2,000 labelled predictions with per-row costs; the API's comparison
    once all are in."""
    assert (_train(api, slice(0, 100), 3), _train(api, slice(0, 4000), 60)) == (1, 2)
    assert api.put("/v1/models/fraud/aliases/production", json={"version": 1}).status_code == 200
    assert api.put("/v1/models/fraud/shadow", json={"version": 2}).status_code == 200
    rows, labels = X[5000:7000], Y[5000:7000]
    ids = [f"r{i}" for i in range(len(rows))]
    costs = [
        {"c_fp": 1.0, "c_fn": float(c)} for c in np.random.default_rng(1).uniform(1, 10, len(rows))
    ]
    for s in range(0, len(rows), 500):
        r = api.post("/v1/models/fraud/predict", json={
            "instances": rows[s : s + 500].tolist(), "row_costs": costs[s : s + 500],
            "ids": ids[s : s + 500], "alias": "production"})  # fmt: skip
        assert r.status_code == 200, r.text
    outcomes = [{"id": i, "label": int(y)} for i, y in zip(ids, labels, strict=True)]
    deadline = time.monotonic() + 30
    while True:
        for s in range(0, len(outcomes), 500):
            api.post("/v1/models/fraud/outcomes", json={"outcomes": outcomes[s : s + 500]})
        r = api.get("/v1/models/fraud/compare", params={"a": "production", "b": "2"})
        if r.status_code == 200 and r.json()["labelled_pairs"] == len(rows):
            return dict(r.json())
        assert time.monotonic() < deadline, r.text
        time.sleep(0.2)


def test_comparison_panel_shows_the_apis_figures(browser: WebDriver, database_url: str) -> None:
    with serve(_settings(database_url)) as url, api_client(url) as api:
        report = _shadowed_traffic(api)
        assert report["mode"] == "paired" and report["verdict"] == "b decides more cheaply", report
        open_console(browser, url)
        click_model(browser, "fraud")
        assert (
            Select(by_id(browser, "compare-a")).first_selected_option.get_attribute("value")
            == "production"
        )
        assert (
            Select(by_id(browser, "compare-b")).first_selected_option.get_attribute("value") == "2"
        )
        by_id(browser, "compare-load").click()
        settled(browser, "compare-panel", "compare-error")

        assert by_id(browser, "compare-verdict").get_attribute("data-verdict") == report["verdict"]
        assert "a = v1 (production), b = v2" in by_id(browser, "compare-verdict").text
        d = report["cost_difference"]
        assert value_of(by_id(browser, "compare-mean")) == d["mean_difference"]
        assert value_of(by_id(browser, "compare-low")) == d["low"]
        assert value_of(by_id(browser, "compare-high")) == d["high"]
        assert value_of(by_id(browser, "compare-pairs")) == report["labelled_pairs"]
        # the interval drawn: entirely left of zero (b cheaper), the point inside it
        chart = by_id(browser, "compare-interval-chart")
        line = chart.find_element(By.CSS_SELECTOR, "line.interval")
        x1, x2 = float(line.get_attribute("data-x1")), float(line.get_attribute("data-x2"))
        zero = float(chart.find_element(By.CSS_SELECTOR, "line.zero").get_attribute("data-x"))
        point = float(chart.find_element(By.CSS_SELECTOR, "circle.point").get_attribute("data-x"))
        assert x1 <= point <= x2 < zero and "b" in line.get_attribute("class").split()
        for side in ("a", "b"):
            row = browser.find_element(By.CSS_SELECTOR, f'#compare-sides tr[data-side="{side}"]')
            for field, expected in report["versions"][side].items():  # type: ignore[index]
                cell = row.find_element(By.CSS_SELECTOR, f'td[data-field="{field}"]')
                if expected is None:
                    assert cell.get_attribute("data-value") is None, field
                else:
                    assert value_of(cell) == expected, (side, field)
        differ = by_id(browser, "compare-differ")
        for field, expected in report["disagreements"].items():  # type: ignore[union-attr]
            assert (
                value_of(differ.find_element(By.CSS_SELECTOR, f'td[data-field="{field}"]'))
                == expected
            )
        assert by_id(browser, "compare-assumptions").text == report["assumptions"]

        # a version with itself: the API's 422, read as such
        Select(by_id(browser, "compare-b")).select_by_value("1")
        by_id(browser, "compare-load").click()
        wait_for(browser, lambda d: state_of(d, "compare-panel") == "error", "the 422")
        error = by_id(browser, "compare-error").text
        assert error.startswith("422 ") and "(field: b)" in error, error
        assert not by_id(browser, "compare-result").is_displayed()


ADMIN_KEY = "cw_console_compare_admin_key_0123456789"


def _compare(browser: WebDriver) -> None:
    click_model(browser, "fraud")
    by_id(browser, "compare-load").click()
    settled(browser, "compare-panel", "compare-error")


def _promote(browser: WebDriver, min_rows: int, max_ece: float, note: str = "") -> str:
    """Fill the promote form, press it, and wait for the outcome's state."""
    for field, value in (("promote-min-pairs", min_rows), ("promote-max-ece", max_ece),
                         ("promote-note", note)):  # fmt: skip
        by_id(browser, field).clear()
        by_id(browser, field).send_keys(str(value))
    by_id(browser, "promote-submit").click()
    wait_for(browser, lambda d: state_of(d, "promote-outcome") not in ("idle", "loading"), "gate")
    return str(state_of(browser, "promote-outcome"))


def test_cost_over_time_and_promotion_from_the_panel(browser: WebDriver, database_url: str) -> None:
    settings = _settings(database_url, auth="on", bootstrap_admin_key=ADMIN_KEY)
    with serve(settings) as url, api_client(url, ADMIN_KEY) as admin:
        report = _shadowed_traffic(admin)
        r = admin.post("/v1/keys", json={"name": "viewer", "role": "reader"})
        assert r.status_code == 201, r.text
        reader_key = r.json()["key"]
        open_console(browser, url)
        use_key(browser, reader_key)
        _compare(browser)

        # both versions' mean realised cost per day, drawn from the API's series
        assert report["bucket"] == "day" and len(report["series"]) >= 1
        chart = browser.find_element(
            By.CSS_SELECTOR, '#compare-series [data-chart="compare-series"]'
        )
        for side in ("a", "b"):
            points = chart.find_elements(By.CSS_SELECTOR, f'circle.point[data-series="{side}"]')
            drawn = [(p.get_attribute("data-start"), value_of(p)) for p in points]
            assert drawn == [(e["start"], e[side]["mean_realised_cost"]) for e in report["series"]]
        assert sum(e["a"]["labelled"] for e in report["series"]) == report["labelled_pairs"]

        # a reader may compare but not promote: the API's 403, the alias stays
        assert by_id(browser, "promote-form").is_displayed()
        assert "to production, now v1" in by_id(browser, "promote-what").text
        assert _promote(browser, 200, 0.05) == "error"
        assert by_id(browser, "promote-message").text.startswith("403 FORBIDDEN"), by_id(
            browser, "promote-message"
        ).text
        assert admin.get("/v1/models/fraud").json()["aliases"]["production"] == 1

        # an admin: refused with the evidence (too few rows for the rule), then promoted
        use_key(browser, ADMIN_KEY)
        _compare(browser)
        assert _promote(browser, 5000, 0.05) == "refused"
        message = by_id(browser, "promote-message").text
        assert message.startswith("409 PROMOTION_REFUSED") and "required 5000" in message, message
        rows = {
            row.get_attribute("data-check"): row
            for row in by_id(browser, "promote-checks").find_elements(By.CSS_SELECTOR, "tbody tr")
        }
        assert set(rows) == {"min_labelled_pairs", "max_cost_difference", "max_ece_increase"}
        pairs = rows["min_labelled_pairs"]
        assert pairs.get_attribute("data-passed") == "false"
        assert value_of(pairs.find_element(By.CSS_SELECTOR, 'td[data-field="observed"]')) == 2000
        high = rows["max_cost_difference"]
        assert high.get_attribute("data-passed") == "true"
        assert (
            value_of(high.find_element(By.CSS_SELECTOR, 'td[data-field="observed"]'))
            == (
                report["cost_difference"]["high"]  # type: ignore[index]
            )
        )
        assert admin.get("/v1/models/fraud").json()["aliases"]["production"] == 1

        assert _promote(browser, 1000, 0.05, "from the console") == "promoted"
        assert "production now points to v2 (was v1)" in by_id(browser, "promote-message").text
        assert admin.get("/v1/models/fraud").json()["aliases"]["production"] == 2
        history = admin.get("/v1/models/fraud/aliases/production/history").json()["moves"]
        assert [m["reason"] for m in history] == ["promoted", "manual"]
        assert history[0]["note"] == "from the console" and history[0]["actor_role"] == "admin"
        passed = by_id(browser, "promote-checks").find_elements(By.CSS_SELECTOR, "tbody tr")
        assert [p.get_attribute("data-passed") for p in passed] == ["true"] * 3
