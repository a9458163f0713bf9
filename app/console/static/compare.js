// The comparison panel: GET /v1/models/{name}/compare of two versions (or aliases) by the
// realised cost of their decisions on labelled predictions: the verdict, the interval of
// the mean difference (b - a) drawn against zero, each side's figures, (paired) the rows
// the two decided differently, and both sides' mean realised cost per day or hour. When a
// is an alias, b can be promoted to it through the gate (POST .../aliases/{a}/promote,
// admin): a refusal shows the 409's evidence, check by check.

import { api, modelPath } from "./api.js";
import { colour, timeChart } from "./chart.js";
import { $, el, formatNumber, setFigure, showError } from "./dom.js";

const BUCKET_MS = { hour: 3600e3, day: 86400e3 };

function utcLabel(t, bucket) {
  const iso = new Date(t).toISOString();
  return bucket === "day" ? iso.slice(0, 10) : `${iso.slice(5, 10)} ${iso.slice(11, 16)}`;
}

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 560;
const HEIGHT = 64;
const PAD = 40;

// per side: [field, header, digits]
const SIDE = [
  ["labelled", "Labelled", 0],
  ["realised_cost", "Realised cost", 2],
  ["mean_realised_cost", "Mean per row", 4],
  ["expected_cost", "Expected cost", 2],
  ["cost_ratio", "Realised / expected", 4],
  ["brier", "Brier", 4],
  ["log_loss", "Log loss", 4],
  ["ece", "ECE", 4],
];

function svg(tag, attributes = {}) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attributes)) node.setAttribute(k, String(v));
  return node;
}

/** The interval [low, high] of the mean difference and its point, on an axis through 0. */
export function intervalChart(d) {
  const lo = Math.min(d.low, 0);
  const hi = Math.max(d.high, 0);
  const span = hi - lo || 1;
  const x = (v) => PAD + ((v - lo) / span) * (WIDTH - 2 * PAD);
  const root = svg("svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img", id: "compare-interval-chart",
    "data-low": d.low, "data-high": d.high, "data-mean": d.mean_difference });
  root.append(svg("title"));
  root.firstChild.textContent = `mean difference ${d.mean_difference} in [${d.low}, ${d.high}]`;
  const y = HEIGHT / 2;
  root.append(svg("line", { x1: PAD, x2: WIDTH - PAD, y1: y, y2: y, class: "axis" }));
  root.append(svg("line", { x1: x(0), x2: x(0), y1: 8, y2: HEIGHT - 8, class: "zero",
    "data-x": x(0) }));
  const cheaper = d.high < 0 ? "b" : d.low > 0 ? "a" : "none";
  root.append(svg("line", { x1: x(d.low), x2: x(d.high), y1: y, y2: y, class: `interval ${cheaper}`,
    "stroke-width": 6, "data-x1": x(d.low), "data-x2": x(d.high) }));
  root.append(svg("circle", { cx: x(d.mean_difference), cy: y, r: 5, class: "point",
    "data-x": x(d.mean_difference) }));
  for (const [v, anchor] of [[d.low, "end"], [d.high, "start"]]) {
    const label = svg("text", { x: x(v) + (anchor === "end" ? -6 : 6), y: y - 10, "text-anchor": anchor });
    label.textContent = formatNumber(v, 4);
    root.append(label);
  }
  const zero = svg("text", { x: x(0), y: HEIGHT - 2, "text-anchor": "middle" });
  zero.textContent = "0";
  root.append(zero);
  return root;
}

/** Both sides' mean realised cost per labelled row, per bucket of the report's series. */
export function seriesChart(report) {
  const side = (key, index) => ({
    key,
    version: report[key].version,
    label: `${key}: v${report[key].version}`,
    colour: colour(index),
    dashed: key === "b",
    points: report.series.map((e) => ({
      t: Date.parse(e.start), start: e.start, value: e[key].mean_realised_cost,
    })),
  });
  return timeChart("compare-series", "Mean realised cost per labelled row, a (solid) and b (dashed)",
    [side("a", 0), side("b", 1)], {
      width: BUCKET_MS[report.bucket], format: (t) => utcLabel(t, report.bucket), digits: 4,
      emptyText: "No labelled rows in this range.",
    });
}

export class Compare {
  constructor({ onPromoted } = {}) {
    this.model = null;
    this.report = null;
    this.sequence = 0;
    this.onPromoted = onPromoted;
    this.panel = $("#compare-panel");
    $("#compare-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.load();
    });
    $("#promote-form").addEventListener("submit", (event) => this.promote(event));
  }

  /** Offer the versions and aliases of model `name` (null: nothing selected). */
  select(name, versions, aliases) {
    if (name !== this.model) this.clearPromotion(); // a promotion's outcome stays for its model
    this.model = name;
    this.sequence += 1;
    this.clear();
    const enough = name !== null && versions.length >= 2;
    $("#compare-model").textContent = name ? `of ${name}` : "";
    $("#compare-hint").hidden = enough;
    $("#compare-form").hidden = !enough;
    this.panel.dataset.state = "idle";
    if (!enough) return;
    const options = () => [
      ...Object.keys(aliases || {}).sort().map((a) =>
        el("option", { value: a }, `${a} (v${aliases[a]})`)),
      ...versions.map((v) => el("option", { value: String(v.version) }, `v${v.version}`)),
    ];
    $("#compare-a").replaceChildren(...options());
    $("#compare-b").replaceChildren(...options());
    const newest = versions.map((v) => v.version).sort((p, q) => q - p);
    $("#compare-a").value = aliases && aliases.production ? "production" : String(newest[1]);
    $("#compare-b").value = String(newest[0]);
  }

  clear() {
    showError($("#compare-error"), null);
    $("#compare-result").hidden = true;
    $("#compare-interval").replaceChildren();
    $("#compare-sides tbody").replaceChildren();
    $("#compare-disagreements").replaceChildren();
    $("#compare-series").replaceChildren();
    $("#promote-form").hidden = true;
    this.report = null;
  }

  clearPromotion() {
    $("#promote-message").className = "";
    $("#promote-message").textContent = "";
    $("#promote-evidence").replaceChildren();
    $("#promote-outcome").dataset.state = "idle";
  }

  async load() {
    const name = this.model;
    if (name === null) return;
    const sequence = ++this.sequence;
    const params = new URLSearchParams({
      a: $("#compare-a").value, b: $("#compare-b").value, mode: $("#compare-mode").value,
      bucket: $("#compare-bucket").value,
    });
    this.panel.dataset.state = "loading";
    try {
      const report = await api(`${modelPath(name)}/compare?${params}`);
      if (sequence !== this.sequence) return;
      this.clear();
      this.render(report);
      this.panel.dataset.state = "ready";
    } catch (error) {
      if (sequence !== this.sequence) return;
      this.clear();
      showError($("#compare-error"), error);
      this.panel.dataset.state = "error";
    }
  }

  render(report) {
    this.report = report;
    $("#compare-result").hidden = false;
    const side = (s) => `v${s.version}${s.alias ? ` (${s.alias})` : ""}`;
    $("#compare-verdict").textContent = `${report.verdict}: a = ${side(report.a)}, b = ${side(report.b)}`;
    $("#compare-verdict").dataset.verdict = report.verdict;
    const d = report.cost_difference;
    const figure = (id, value, digits) => setFigure($(id), value, digits);
    figure("#compare-mean", d ? d.mean_difference : null, 4);
    figure("#compare-low", d ? d.low : null, 4);
    figure("#compare-high", d ? d.high : null, 4);
    figure("#compare-needed", d ? d.needed_rows : null, 0);
    figure("#compare-pairs", report.mode === "paired" ? report.labelled_pairs
      : (report.labelled ? Math.min(report.labelled.a, report.labelled.b) : null), 0);
    $("#compare-mode-shown").textContent = `${report.mode}, ${formatNumber(report.confidence * 100, 0)}%`;
    if (d) $("#compare-interval").replaceChildren(intervalChart(d));
    $("#compare-sides tbody").replaceChildren(...["a", "b"].map((key) => {
      const figures = report.versions[key];
      const cells = SIDE.map(([field, , digits]) => {
        const td = el("td", { class: "num", "data-field": field });
        setFigure(td, figures[field], digits);
        return td;
      });
      return el("tr", { "data-side": key }, el("th", { scope: "row" }, `${key}: ${side(report[key])}`), ...cells);
    }));
    const dis = report.disagreements;
    if (dis) {
      const cell = (field, value, digits) => {
        const td = el("td", { class: "num", "data-field": field });
        setFigure(td, value, digits);
        return td;
      };
      $("#compare-disagreements").replaceChildren(el("table", { class: "grid", id: "compare-differ" },
        el("caption", {}, "Rows the two decided differently (where they agree, they cost the same)"),
        el("thead", {}, el("tr", {}, ...["Rows", "Decided differently", "Share", "Cost of a's decisions",
          "Cost of b's decisions"].map((h) => el("th", { scope: "col" }, h)))),
        el("tbody", {}, el("tr", {}, cell("n_rows", dis.n_rows, 0), cell("n_differ", dis.n_differ, 0),
          cell("share", dis.share, 4), cell("cost_a", dis.cost_a, 2), cell("cost_b", dis.cost_b, 2)))));
    }
    $("#compare-series").replaceChildren(seriesChart(report));
    $("#compare-assumptions").textContent = report.assumptions;
    const alias = report.a.alias;
    $("#promote-form").hidden = !alias;
    if (alias) {
      $("#promote-what").textContent = `Promote b (v${report.b.version}) to ${alias}, now v${report.a.version}, ` +
        "if the gate's rule holds:";
    }
  }

  // -------------------------------------------------------------- promote
  async promote(event) {
    event.preventDefault();
    const report = this.report;
    if (!report || !report.a.alias) return;
    const name = this.model;
    const alias = report.a.alias;
    const outcome = $("#promote-outcome");
    const message = $("#promote-message");
    this.clearPromotion();
    message.textContent = `Asking the gate to promote v${report.b.version} to ${alias}…`;
    outcome.dataset.state = "loading";
    const body = {
      candidate: report.b.version,
      rule: {
        min_labelled_pairs: Number($("#promote-min-pairs").value),
        max_ece_increase: Number($("#promote-max-ece").value),
        confidence: report.confidence,
        mode: report.mode,
      },
      note: $("#promote-note").value,
    };
    try {
      const move = await api(`${modelPath(name)}/aliases/${encodeURIComponent(alias)}/promote`, {
        method: "POST", body,
      });
      message.textContent = `Promoted: ${move.alias} now points to v${move.to_version} (was v${move.from_version}).`;
      $("#promote-evidence").replaceChildren(evidenceTable(move.evidence.checks));
      outcome.dataset.state = "promoted";
      if (this.onPromoted) await this.onPromoted();
    } catch (error) {
      message.className = "error";
      message.textContent = error.message || String(error);
      const checks = error.body && error.body.evidence ? error.body.evidence.checks : null;
      if (checks) $("#promote-evidence").replaceChildren(evidenceTable(checks));
      outcome.dataset.state = error.status === 409 ? "refused" : "error";
    }
  }
}

/** The gate's checks: each one's requirement, what was observed, and whether it passed. */
function evidenceTable(checks) {
  const observed = (value) => {
    const td = el("td", { class: "num", "data-field": "observed" });
    if (typeof value === "number") setFigure(td, value, Number.isInteger(value) ? 0 : 4);
    else td.textContent = value === null ? "–" : String(value);
    return td;
  };
  return el("table", { class: "grid", id: "promote-checks" },
    el("caption", {}, "The promotion gate's checks"),
    el("thead", {}, el("tr", {}, ...["Check", "Required", "Observed", "Passed"].map((h) =>
      el("th", { scope: "col" }, h)))),
    el("tbody", {}, ...checks.map((c) => el("tr", { "data-check": c.check, "data-passed": String(c.passed) },
      el("th", { scope: "row" }, c.check), el("td", { "data-field": "required" }, String(c.required)),
      observed(c.observed), el("td", { "data-field": "passed" }, c.passed ? "yes" : "no")))));
}
