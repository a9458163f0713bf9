// The monitoring panel: GET /v1/models/{name}/monitoring as plots over time, per version;
// the reliability diagram and calibration test of the whole range or one bucket; and
// recalibration from the logged outcomes (POST .../versions/{v}/recalibrate, admin).

import { api, modelPath } from "./api.js";
import { colour, reliabilityChart, timeChart } from "./chart.js";
import { $, el, formatNumber, setFigure, showError } from "./dom.js";

const BUCKET_MS = { hour: 3600e3, day: 86400e3 };
const RANGE_MS = { "24h": 86400e3, "7d": 7 * 86400e3, "30d": 30 * 86400e3 };
const ALARM_TESTS = "Spiegelhalter, Hosmer-Lemeshow or Cox below 0.01 / 3"; // the service's calibration_alarm

/** The tests that fired a calibration alarm, with their p-values. */
function alarmBy(alarm) {
  if (!alarm || !alarm.by.length) return "no test fired";
  return alarm.by.map((name) => `${name.replace("_", "-")} p = ${formatP(alarm.p_values[name])}`).join(", ");
}

// The summary table: [field, header, digits, read(figures)]
const SUMMARY = [
  ["predictions", 0, (f) => f.predictions],
  ["labelled", 0, (f) => f.labelled],
  ["coverage", 4, (f) => f.coverage],
  ["predicted_positive_rate", 4, (f) => f.predicted_positive_rate],
  ["observed_positive_rate", 4, (f) => f.observed_positive_rate],
  ["realised_cost", 2, (f) => f.realised_cost],
  ["expected_cost", 2, (f) => f.expected_cost],
  ["cost_ratio", 4, (f) => f.cost_ratio],
  ["brier", 4, (f) => f.calibration?.brier ?? null],
  ["log_loss", 4, (f) => f.calibration?.log_loss ?? null],
  ["ece", 4, (f) => f.calibration?.ece ?? null],
];

// The per-action table: [field of a total.actions entry, digits]
const ACTIONS = [
  ["taken", 0], ["share", 4], ["labelled", 0],
  ["realised_cost", 2], ["mean_realised_cost", 4], ["expected_cost", 2],
];

/** A p-value for people: 4 decimals, or scientific notation below 0.0001. */
export function formatP(p) {
  if (p === null || p === undefined) return "–";
  return p !== 0 && p < 1e-4 ? p.toExponential(1) : p.toFixed(4);
}

function utcLabel(t, bucket) {
  const iso = new Date(t).toISOString();
  return bucket === "day" ? iso.slice(0, 10) : `${iso.slice(5, 10)} ${iso.slice(11, 16)}`;
}

/** "2026-11-25T07:00" (a datetime-local value, read as UTC) -> ISO with Z, or null. */
function utcInput(value) {
  return value ? `${value.length === 16 ? `${value}:00` : value}Z` : null;
}

export class Monitor {
  constructor({ onVersionCreated }) {
    this.model = null;
    this.versions = []; // the model's versions (VersionOut)
    this.unchecked = new Set(); // versions the user left out
    this.report = null;
    this.sequence = 0;
    this.onVersionCreated = onVersionCreated;
    this.panel = $("#monitor-panel");
    $("#monitor-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.load();
    });
    for (const id of ["#monitor-range", "#monitor-bucket", "#monitor-since", "#monitor-until"]) {
      $(id).addEventListener("change", () => {
        $("#monitor-custom").hidden = $("#monitor-range").value !== "custom";
        this.load();
      });
    }
    $("#monitor-reliability-bucket").addEventListener("change", () => this.renderCalibration());
    $("#recalibrate-form").addEventListener("submit", (event) => this.recalibrate(event));
  }

  /** Show the monitoring of model `name` (its versions listed), or nothing (null). */
  select(name, versions) {
    if (name !== this.model) {
      this.unchecked = new Set();
      $("#recalibrate-message").textContent = "";
      $("#recalibrate-result").replaceChildren();
    }
    this.model = name;
    this.versions = versions || [];
    $("#monitor-model").textContent = name ? `of ${name}` : "";
    $("#monitor-hint").hidden = name !== null;
    $("#monitor-form").hidden = name === null;
    this.fillVersions();
    if (name === null) {
      this.sequence += 1;
      this.clear();
      this.panel.dataset.state = "idle";
      return;
    }
    this.load();
  }

  fillVersions() {
    const box = $("#monitor-versions");
    const items = this.versions.map((v) => {
      const input = el("input", { type: "checkbox", id: `monitor-v${v.version}`,
        value: v.version, "data-version": v.version });
      input.checked = !this.unchecked.has(v.version);
      input.addEventListener("change", () => {
        if (input.checked) this.unchecked.delete(v.version);
        else this.unchecked.add(v.version);
        this.load();
      });
      return el("label", { class: "check", for: `monitor-v${v.version}` }, input, `v${v.version}`);
    });
    box.replaceChildren(el("legend", {}, "Versions"), ...items);
  }

  chosenVersions() {
    return this.versions.map((v) => v.version).filter((v) => !this.unchecked.has(v));
  }

  query() {
    const params = new URLSearchParams({ bucket: $("#monitor-bucket").value });
    const range = $("#monitor-range").value;
    let since = null;
    let until = null;
    if (range in RANGE_MS) since = new Date(Date.now() - RANGE_MS[range]).toISOString();
    if (range === "custom") {
      since = utcInput($("#monitor-since").value);
      until = utcInput($("#monitor-until").value);
    }
    if (since) params.set("since", since);
    if (until) params.set("until", until);
    const chosen = this.chosenVersions();
    // one version picked out of several: the API filters (and says if it was never logged);
    // otherwise all logged versions, filtered here
    if (chosen.length === 1 && this.versions.length > 1) params.set("version", String(chosen[0]));
    return { params, since, until, chosen };
  }

  clear() {
    this.report = null;
    showError($("#monitor-error"), null);
    $("#monitor-empty").hidden = true;
    $("#monitor-result").hidden = true;
    $("#monitor-summary tbody").replaceChildren();
    $("#monitor-actions tbody").replaceChildren();
    $("#monitor-charts").replaceChildren();
    $("#monitor-ece").replaceChildren();
    $("#monitor-calibration").replaceChildren();
    $("#monitor-flags tbody").replaceChildren();
    $("#recalibrate-form").hidden = true;
  }

  async load() {
    const name = this.model;
    if (name === null) return;
    const sequence = ++this.sequence;
    const { params, since, until, chosen } = this.query();
    this.panel.dataset.state = "loading";
    if (chosen.length === 0) {
      this.clear();
      this.showEmpty([el("p", {}, "Choose at least one version.")], "no-version");
      this.panel.dataset.state = "ready";
      return;
    }
    try {
      const report = await api(`${modelPath(name)}/monitoring?${params}`);
      if (sequence !== this.sequence) return;
      report.versions = report.versions.filter((v) => chosen.includes(v.version));
      this.clear();
      this.report = { ...report, chosen, window: { since, until } };
      if (report.versions.length === 0) {
        await this.explainNoLog(name, since || until);
        if (sequence !== this.sequence) return;
      } else {
        this.render();
      }
      this.panel.dataset.state = "ready";
    } catch (error) {
      if (sequence !== this.sequence) return;
      this.clear();
      showError($("#monitor-error"), error);
      this.panel.dataset.state = "error";
    }
  }

  showEmpty(children, reason) {
    const box = $("#monitor-empty");
    box.replaceChildren(...children);
    box.dataset.reason = reason;
    box.hidden = false;
  }

  async explainNoLog(name, windowed) {
    let model = null;
    try {
      model = await api(modelPath(name));
    } catch {
      // the explanation below holds without it
    }
    const code = (text) => el("code", {}, text);
    const off = model && model.prediction_log === false;
    const lines = [
      el("p", { class: "strong" }, `No logged predictions of ${name}`,
        windowed ? " in this range (choose “everything logged”)." : " yet."),
    ];
    if (off) {
      lines.push(el("p", {}, "Logging is switched off for this model. An admin turns it on with ",
        code(`PATCH /v1/models/${name} {"prediction_log": true}`), "."));
    } else {
      lines.push(el("p", {}, "Every row of ", code(`POST /v1/models/${name}/predict`), " and ",
        code(`POST /v2/models/${name}/infer`), " is logged, unless the service runs with ",
        code("COSTWISE_PREDICTION_LOG=false"), " or the model's ", code("prediction_log"),
        " is off. Each answer carries the row's id (", code("predictions[i].id"),
        "), or send your own ", code("ids"), "."));
    }
    lines.push(el("p", {}, "When the true outcomes are known, report them with ",
      code(`POST /v1/models/${name}/outcomes {"outcomes": [{"id": "…", "label": 1}]}`),
      " or ", code(`costwise outcomes send FILE.csv --model ${name}`),
      ": realised cost and calibration need them."));
    this.showEmpty(lines, off ? "log-off" : "no-predictions");
  }

  // ----------------------------------------------------------------- render
  render() {
    const report = this.report;
    $("#monitor-result").hidden = false;
    const missing = report.chosen.filter((v) => !report.versions.some((r) => r.version === v));
    $("#monitor-missing").textContent = missing.length
      ? `No logged predictions in this range for ${missing.map((v) => `v${v}`).join(", ")}.`
      : "";
    $("#monitor-summary tbody").replaceChildren(...report.versions.map((v, i) => this.summaryRow(v, i)));
    const actions = report.versions.flatMap((v) => (v.total.actions || []).map((a) => this.actionRow(v, a)));
    $("#monitor-actions tbody").replaceChildren(...actions);
    $("#monitor-actions").hidden = actions.length === 0;
    const labelled = report.versions.some((v) => v.total.labelled > 0);
    $("#monitor-unlabelled").hidden = labelled;
    if (!labelled) {
      $("#monitor-unlabelled").replaceChildren(
        el("strong", {}, "No labelled predictions in this range: "),
        "coverage is 0, so realised cost and calibration cannot be measured yet. Report outcomes with ",
        el("code", {}, `POST /v1/models/${this.model}/outcomes`), " or ",
        el("code", {}, `costwise outcomes send FILE.csv --model ${this.model}`), ".");
    }
    const figures = this.charts(); // the last, ECE, next to the reliability diagram
    $("#monitor-ece").replaceChildren(figures.pop());
    $("#monitor-charts").replaceChildren(...figures);
    const select = $("#monitor-reliability-bucket");
    const starts = [...new Set(report.versions.flatMap((v) => v.buckets.map((b) => b.start)))].sort();
    const previous = select.value;
    select.replaceChildren(el("option", { value: "" }, "whole range"),
      ...starts.map((s) => el("option", { value: s }, utcLabel(Date.parse(s), report.bucket))));
    select.value = starts.includes(previous) ? previous : "";
    this.renderCalibration();
    this.fillRecalibrate();
  }

  summaryRow(v, index) {
    const cells = SUMMARY.map(([field, digits, read]) => {
      const cell = el("td", { class: "num", "data-field": field });
      setFigure(cell, read(v.total), digits);
      return cell;
    });
    const swatch = el("span", { class: `dot c${index % 7}`, "aria-hidden": "true" });
    return el("tr", { "data-version": v.version }, el("th", { scope: "row" }, swatch, `v${v.version}`), ...cells);
  }

  /** One action of one version: GET .../monitoring's total.actions entry, figure by figure. */
  actionRow(v, a) {
    const cells = ACTIONS.map(([field, digits]) => {
      const cell = el("td", { class: "num", "data-field": field });
      setFigure(cell, a[field], digits);
      return cell;
    });
    return el("tr", { "data-version": v.version, "data-action": a.action },
      el("th", { scope: "row" }, `v${v.version}`), el("td", {}, a.action), ...cells);
  }

  series(key, label, read, { dashed = false, classIndex = null } = {}) {
    const report = this.report;
    return report.versions.map((v, i) => ({
      key,
      version: v.version,
      label: `v${v.version} ${label}`,
      colour: colour(classIndex === null ? i : i * 3 + classIndex),
      dashed,
      points: v.buckets.map((b) => ({ t: Date.parse(b.start), start: b.start, value: read(b) })),
    }));
  }

  charts() {
    const { bucket, versions } = this.report;
    const noLabels = "No labelled predictions in this range: report outcomes to see this.";
    const base = { width: BUCKET_MS[bucket], format: (t) => utcLabel(t, bucket), emptyText: noLabels };
    const binary = versions.every((v) => (v.classes || []).length === 2 || v.total.predicted_positive_rate !== null);
    const figures = [
      timeChart("volume", "Predictions (solid) and labelled predictions (dashed) per bucket", [
        ...this.series("predictions", "predictions", (b) => b.predictions),
        ...this.series("labelled", "labelled", (b) => b.labelled, { dashed: true }),
      ], { ...base, digits: 0, emptyText: "No predictions in this range." }),
      timeChart("coverage", "Labelled coverage (labelled / predictions)",
        this.series("coverage", "coverage", (b) => b.coverage),
        { ...base, yMin: 0, yMax: 1, digits: 2, emptyText: "No predictions in this range." }),
    ];
    if (binary) {
      const cls = versions[0].classes ? String(versions[0].classes[1]) : "positive";
      figures.push(timeChart("rate", `Positive rate (class ${cls}): decided (solid) vs observed (dashed)`, [
        ...this.series("predicted_positive_rate", "decided", (b) => b.predicted_positive_rate),
        ...this.series("observed_positive_rate", "observed", (b) => b.observed_positive_rate, { dashed: true }),
      ], { ...base, yMin: 0, yMax: 1, digits: 2 }));
    } else {
      const k = Math.max(...versions.map((v) => v.total.predicted_shares.length));
      const shares = [];
      for (let c = 0; c < k; c += 1) {
        const name = versions[0].classes ? String(versions[0].classes[c]) : String(c);
        shares.push(...this.series(`predicted_shares.${c}`, `class ${name} decided`,
          (b) => b.predicted_shares[c] ?? null, { classIndex: c }));
        shares.push(...this.series(`observed_shares.${c}`, `class ${name} observed`,
          (b) => (b.observed_shares ? b.observed_shares[c] : null), { dashed: true, classIndex: c }));
      }
      figures.push(timeChart("rate", "Class shares: decided (solid) vs observed (dashed)", shares,
        { ...base, yMin: 0, yMax: 1, digits: 2 }));
    }
    figures.push(
      timeChart("cost", "Realised cost (solid) vs expected cost at decision time (dashed)", [
        ...this.series("realised_cost", "realised", (b) => b.realised_cost),
        ...this.series("expected_cost", "expected", (b) => b.expected_cost, { dashed: true }),
      ], { ...base, digits: 1 }),
      timeChart("ratio", "Realised / expected cost (1 = as expected)",
        this.series("cost_ratio", "ratio", (b) => b.cost_ratio), { ...base, reference: 1, digits: 2 }),
      timeChart("scores", "Brier score (solid) and log loss (dashed), labelled predictions", [
        ...this.series("brier", "Brier", (b) => b.calibration?.brier ?? null),
        ...this.series("log_loss", "log loss", (b) => b.calibration?.log_loss ?? null, { dashed: true }),
      ], { ...base, digits: 2 }),
      timeChart("ece", "Expected calibration error (ringed: calibration test failed, p < 0.01)",
        this.series("ece", "ECE", (b) => b.calibration?.ece ?? null),
        {
          ...base, digits: 2,
          markers: versions.flatMap((v) => v.buckets
            .filter((b) => b.calibration_alarm)
            .map((b) => ({ t: Date.parse(b.start), start: b.start, value: b.calibration.ece,
              version: v.version,
              text: `v${v.version}: calibration test failed (${alarmBy(b.calibration.alarm)})` }))),
        }),
    );
    return figures;
  }

  /** The figures of each version for the reliability selector: whole range or one bucket. */
  selectedFigures() {
    const start = $("#monitor-reliability-bucket").value;
    return this.report.versions.map((v, i) => ({
      version: v.version,
      index: i,
      figures: start ? v.buckets.find((b) => b.start === start) || null : v.total,
    }));
  }

  renderCalibration() {
    if (!this.report) return;
    const chosen = this.selectedFigures();
    const labelled = chosen.filter((c) => c.figures && c.figures.calibration);
    const series = labelled.map((c) => ({
      key: "reliability", version: c.version, label: `v${c.version}`, colour: colour(c.index),
      bins: c.figures.calibration.reliability,
    }));
    const where = $("#monitor-reliability-bucket").value ? "this bucket" : "this range";
    $("#monitor-calibration").replaceChildren(reliabilityChart("reliability",
      "Reliability diagram: observed share of positives per probability bin",
      series, `No labelled predictions in ${where}: no reliability diagram.`));
    $("#monitor-flags tbody").replaceChildren(...chosen.map((c) => this.flagRow(c)));
  }

  flagRow({ version, figures }) {
    const cal = figures?.calibration ?? null;
    const flag = el("td", { "data-field": "flag" });
    let state;
    if (!figures) {
      state = "no-predictions";
      flag.textContent = "no predictions in this bucket";
    } else if (!cal) {
      state = "unlabelled";
      flag.textContent = "no labelled predictions: no test";
    } else if (figures.calibration_alarm === null || !cal.alarm) {
      state = "no-test";
      flag.textContent = "no test for more than two classes (see ECE)";
    } else if (figures.calibration_alarm) {
      state = "alarm";
      flag.append(el("span", { class: "badge alarm", title: `${alarmBy(cal.alarm)}: the probabilities do not match the outcomes` }, "✗ miscalibrated"));
    } else {
      state = "ok";
      flag.append(el("span", { class: "badge ok", title: `no test (${ALARM_TESTS}): no evidence against calibration` }, "✓ calibrated"));
    }
    flag.dataset.state = state;
    const number = (field, value, digits) => {
      const cell = el("td", { class: "num", "data-field": field });
      setFigure(cell, value, digits);
      return cell;
    };
    const p = (field, value, title) => {
      const cell = el("td", { class: "num", "data-field": field, title });
      cell.textContent = formatP(value);
      if (value !== null && value !== undefined) cell.dataset.value = String(value);
      return cell;
    };
    return el("tr", { "data-version": version, "data-state": state },
      el("th", { scope: "row" }, `v${version}`),
      number("n", cal ? cal.n : null, 0),
      number("ece", cal ? cal.ece : null, 4),
      p("p_value", cal?.spiegelhalter?.p_value ?? null,
        cal?.spiegelhalter ? `Spiegelhalter's z = ${formatNumber(cal.spiegelhalter.z, 2)}` : null),
      p("hl_p_value", cal?.hosmer_lemeshow?.p_value ?? null),
      p("cox_p_value", cal?.cox?.p_value ?? null,
        cal?.cox ? `intercept ${formatNumber(cal.cox.intercept, 2)}, slope ${formatNumber(cal.cox.slope, 2)}` : null),
      flag);
  }

  // ------------------------------------------------------------ recalibrate
  fillRecalibrate() {
    const form = $("#recalibrate-form");
    const labelled = this.report.versions.filter((v) => v.total.labelled > 0);
    form.hidden = labelled.length === 0;
    const select = $("#recalibrate-version");
    const previous = select.value;
    select.replaceChildren(...labelled.map((v) => el("option", { value: v.version },
      `v${v.version} (${formatNumber(v.total.labelled, 0)} labelled)`)));
    if (labelled.some((v) => String(v.version) === previous)) select.value = previous;
  }

  async recalibrate(event) {
    event.preventDefault();
    const version = Number($("#recalibrate-version").value);
    const method = $("#recalibrate-method").value;
    const message = $("#recalibrate-message");
    const form = $("#recalibrate-form");
    const { since, until } = this.report.window;
    const span = {};
    if (since) span.since = since;
    if (until) span.until = until;
    message.className = "";
    message.textContent = `Recalibrating v${version} (${method})…`;
    $("#recalibrate-result").replaceChildren();
    form.dataset.state = "loading";
    try {
      const created = await api(`${modelPath(this.model, version)}/recalibrate`, {
        method: "POST",
        body: { method, from_outcomes: span },
      });
      const cal = created.calibration;
      message.textContent = `Created v${created.version}: ${cal.method} map over v${version}'s booster, ` +
        `fitted on ${formatNumber(cal.n_calibration, 0)} labelled predictions; ` +
        `measured on ${formatNumber(cal.n_holdout, 0)} held out:`;
      message.dataset.version = String(created.version);
      $("#recalibrate-result").replaceChildren(this.beforeAfter(created.metrics.recalibration));
      form.dataset.state = "ready";
      if (this.onVersionCreated) await this.onVersionCreated(created.version);
    } catch (error) {
      message.className = "error";
      message.textContent = error.message || String(error);
      form.dataset.state = "error";
    }
  }

  beforeAfter({ before, after }) {
    const rows = [
      ["brier", "Brier", (m) => m.brier, 4],
      ["log_loss", "Log loss", (m) => m.log_loss, 4],
      ["ece", "ECE", (m) => m.ece, 4],
      ["p_value", "Calibration test p", (m) => m.spiegelhalter?.p_value ?? null, null],
    ];
    const cell = (field, value, digits) => {
      const td = el("td", { class: "num", "data-field": field });
      if (digits === null) {
        td.textContent = formatP(value);
        if (value !== null) td.dataset.value = String(value);
      } else {
        setFigure(td, value, digits);
      }
      return td;
    };
    return el("table", { class: "grid", id: "recalibrate-metrics" },
      el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "held out"),
        el("th", { scope: "col" }, "before"), el("th", { scope: "col" }, "after"))),
      el("tbody", {}, ...rows.map(([key, name, read, digits]) => el("tr", { "data-metric": key },
        el("th", { scope: "row" }, name), cell("before", read(before), digits),
        cell("after", read(after), digits)))));
  }
}
