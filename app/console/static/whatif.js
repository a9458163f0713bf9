// The "what if" panel. Two classes: two log-scale cost sliders -> GET .../whatif ->
// threshold, confusion matrix and expected cost; with the review action on, a third slider
// (c_review) -> the answer's `review`: the two thresholds that bound the review band, drawn
// on the probability axis, the rows sent to review and the cost. K classes: a K x K cost-matrix editor ->
// GET .../whatif/matrix -> the K x K confusion matrix and cost. Both on the version's evaluation
// rows (out of fold or held out).

import { api, modelPath } from "./api.js";
import { $, el, formatNumber, showError, setFigure } from "./dom.js";

const DEBOUNCE_MS = 100;
const SVG = "http://www.w3.org/2000/svg";
const BAND_WIDTH = 460;
const BAND_HEIGHT = 64;
const BAND_PAD = 16;

function svg(tag, attributes = {}, text = null) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attributes)) node.setAttribute(k, String(v));
  if (text !== null) node.textContent = text;
  return node;
}

/** The probability axis [0, 1] of the positive class with the review band (low, high)
 * shaded and its two thresholds drawn (each line carries data-value and data-x), and the
 * threshold without review dashed. `band` null: review is never the cheapest. */
export function bandChart(band, threshold) {
  const x = (v) => BAND_PAD + v * (BAND_WIDTH - 2 * BAND_PAD);
  const y = BAND_HEIGHT / 2;
  const root = svg("svg", { viewBox: `0 0 ${BAND_WIDTH} ${BAND_HEIGHT}`, role: "img",
    id: "review-band-chart", "data-band": band ? band.join(",") : "none" });
  root.append(svg("title", {}, band
    ? `review between ${band[0]} and ${band[1]}`
    : "review is never the cheapest decision"));
  root.append(svg("line", { x1: x(0), x2: x(1), y1: y, y2: y, class: "axis" }));
  for (const v of [0, 1]) {
    root.append(svg("text", { x: x(v), y: BAND_HEIGHT - 2, "text-anchor": "middle" }, String(v)));
  }
  if (band) {
    const [low, high] = band;
    root.append(svg("rect", { x: x(low), y: y - 12, width: Math.max(x(high) - x(low), 0),
      height: 24, class: "band", "data-x1": x(low), "data-x2": x(high) }));
    for (const [v, id, anchor] of [[low, "review-low", "end"], [high, "review-high", "start"]]) {
      root.append(svg("line", { id, x1: x(v), x2: x(v), y1: y - 16, y2: y + 16, class: "bound",
        "data-value": v, "data-x": x(v) }));
      root.append(svg("text", { x: x(v) + (anchor === "end" ? -4 : 4), y: 12, "text-anchor": anchor },
        formatNumber(v, 4)));
    }
  }
  root.append(svg("line", { id: "review-plain", x1: x(threshold), x2: x(threshold), y1: y - 20,
    y2: y + 20, class: "plain", "data-value": threshold, "data-x": x(threshold) }));
  return root;
}

/** Slider position (log10) -> cost, rounded to 2 significant digits (what is sent). */
export function costAt(position) {
  return Number((10 ** Number(position)).toPrecision(2));
}

/** The 0-1 cost matrix of K classes: every mistake costs 1, a correct decision 0. */
export function zeroOne(k) {
  return Array.from({ length: k }, (_, i) => Array.from({ length: k }, (_, j) => (i === j ? 0 : 1)));
}

/** Fill `table` (a K x K grid of classes: truth in rows, decision in columns) with a
 * header row and one row per true class, each cell made by `cell(truth, decided, i, j)`. */
function classTable(table, classes, cell) {
  table.querySelector("thead").replaceChildren(el("tr", {},
    el("th", { scope: "col" }, "truth ↓ decision →"),
    ...classes.map((c) => el("th", { scope: "col" }, String(c)))));
  table.querySelector("tbody").replaceChildren(...classes.map((truth, i) => el("tr", {},
    el("th", { scope: "row" }, String(truth)),
    ...classes.map((decided, j) => cell(truth, decided, i, j)))));
}

export class WhatIf {
  constructor() {
    this.target = null; // {name, version, classes}
    this.sequence = 0; // number of the latest request; older answers are ignored
    this.controller = null;
    this.timer = null;
    this.sliders = { c_fp: $("#c-fp"), c_fn: $("#c-fn"), c_review: $("#c-review") };
    this.outputs = { c_fp: $("#c-fp-value"), c_fn: $("#c-fn-value"), c_review: $("#c-review-value") };
    this.reviewOn = $("#review-on");
    this.reviewOn.addEventListener("change", () => {
      this.sliders.c_review.disabled = !this.reviewOn.checked;
      this.changed();
    });
    this.result = $("#whatif-result");
    this.error = $("#whatif-error");
    this.note = $("#whatif-note");
    this.matrixForm = $("#whatif-matrix");
    this.matrix = null; // the K x K costs being edited (K > 2)
    for (const slider of Object.values(this.sliders)) {
      slider.addEventListener("input", () => this.changed());
      slider.addEventListener("change", () => this.changed());
    }
    this.matrixForm.addEventListener("submit", (event) => event.preventDefault());
    this.showCosts();
  }

  get multiclass() {
    return Boolean(this.target && this.target.classes.length !== 2);
  }

  /** The costs sent: c_fp, c_fn, and c_review when the review action is on. */
  costs() {
    const costs = { c_fp: costAt(this.sliders.c_fp.value), c_fn: costAt(this.sliders.c_fn.value) };
    if (this.reviewOn.checked) costs.c_review = costAt(this.sliders.c_review.value);
    return costs;
  }

  showCosts() {
    const costs = this.costs();
    const shown = { ...costs, c_review: costAt(this.sliders.c_review.value) };
    for (const [name, output] of Object.entries(this.outputs)) {
      output.textContent = String(shown[name]);
      this.sliders[name].setAttribute("aria-valuetext", String(shown[name]));
      output.dataset.value = String(shown[name]);
    }
    return costs;
  }

  /** Show what-if numbers for another version (or none); `classes`: the version's. */
  select(name, version, classes = []) {
    this.target = version === null ? null : { name, version, classes };
    const multiclass = this.multiclass;
    $("#whatif-binary").hidden = multiclass;
    $("#confusion-matrix").hidden = multiclass;
    for (const e of document.querySelectorAll("#whatif-result .binary-only")) e.hidden = multiclass;
    this.matrixForm.hidden = !multiclass;
    $("#confusion-matrix-k").hidden = !multiclass;
    if (multiclass) this.buildMatrix(classes);
    this.clear();
    if (this.target) this.request();
  }

  /** The K x K editor: one number input per cell, 0 on the diagonal, 1 elsewhere. */
  buildMatrix(classes) {
    const k = classes.length;
    this.matrix = zeroOne(k);
    classTable($("#cost-matrix"), classes, (truth, decided, i, j) => {
      const input = el("input", {
        type: "number", min: "0", step: "any", value: String(this.matrix[i][j]),
        "data-row": i, "data-col": j, required: true,
        "aria-label": `Cost of deciding ${decided} when the truth is ${truth}`,
      });
      input.addEventListener("input", () => this.cellChanged(input));
      return el("td", {}, input);
    });
    classTable($("#confusion-matrix-k"), classes,
      (truth, decided, i, j) => el("td", { id: `cmk-${i}-${j}`, class: "num" }, "–"));
  }

  cellChanged(input) {
    const value = input.valueAsNumber;
    if (!Number.isFinite(value) || value < 0) {
      input.setAttribute("aria-invalid", "true");
      return; // the browser shows the field as invalid; nothing is sent
    }
    input.removeAttribute("aria-invalid");
    this.matrix[Number(input.dataset.row)][Number(input.dataset.col)] = value;
    this.changed();
  }

  changed() {
    this.showCosts();
    if (!this.target) return;
    this.sequence += 1; // an answer for the previous costs is stale from now on
    if (this.controller) this.controller.abort();
    this.result.dataset.state = "pending";
    window.clearTimeout(this.timer);
    this.timer = window.setTimeout(() => this.request(), DEBOUNCE_MS);
  }

  clear() {
    window.clearTimeout(this.timer);
    if (this.controller) this.controller.abort();
    this.sequence += 1;
    showError(this.error, null);
    this.note.hidden = true;
    for (const id of ["threshold", "mean-cost", "total-cost", "accuracy", "n", "reviewed",
      "review-total"]) {
      setFigure($(`#whatif-${id}`), null);
    }
    $("#whatif-band").textContent = "–";
    this.showReview(false);
    $("#review-chart").replaceChildren();
    for (const id of ["tn", "fp", "fn", "tp"]) setFigure($(`#cm-${id}`), null);
    for (const cell of document.querySelectorAll("#confusion-matrix-k td")) setFigure(cell, null);
    this.result.dataset.state = this.target ? "loading" : "idle";
    delete this.result.dataset.costs;
  }

  async request() {
    const costs = this.showCosts();
    const target = this.target;
    const sequence = ++this.sequence;
    if (this.controller) this.controller.abort();
    this.controller = new AbortController();
    this.result.dataset.state = "loading";
    const path = `${modelPath(target.name, target.version)}/whatif`;
    const matrix = this.multiclass ? this.matrix.map((row) => [...row]) : null;
    try {
      const query = matrix
        ? `/matrix?${new URLSearchParams({ cost_matrix: JSON.stringify(matrix) })}`
        : `?${new URLSearchParams(costs)}`;
      const answer = await api(`${path}${query}`, { signal: this.controller.signal });
      if (sequence !== this.sequence) return; // a newer request was sent meanwhile
      if (matrix) this.renderMatrix(answer, matrix);
      else this.render(answer, costs);
    } catch (error) {
      if (error.name === "AbortError" || sequence !== this.sequence) return;
      this.clear();
      if (error.status === 404) {
        // no evaluation rows stored for this version: a fact about it, not a failure
        this.note.textContent = `No what-if for this version: ${error.detail || error.message}`;
        this.note.hidden = false;
        this.result.dataset.state = "empty";
        return;
      }
      showError(this.error, error);
      this.result.dataset.state = "error";
    }
  }

  figures(answer) {
    showError(this.error, null);
    setFigure($("#whatif-mean-cost"), answer.mean_cost, 4);
    setFigure($("#whatif-total-cost"), answer.total_cost, 2);
    setFigure($("#whatif-accuracy"), answer.accuracy, 4);
    setFigure($("#whatif-n"), answer.n, 0);
  }

  render(answer, costs) {
    this.figures(answer);
    setFigure($("#whatif-threshold"), answer.threshold, 4);
    const [[tn, fp], [fn, tp]] = answer.confusion_matrix;
    setFigure($("#cm-tn"), tn, 0);
    setFigure($("#cm-fp"), fp, 0);
    setFigure($("#cm-fn"), fn, 0);
    setFigure($("#cm-tp"), tp, 0);
    const [negative, positive] = answer.labels.map(String);
    for (const e of document.querySelectorAll(".label-neg")) e.textContent = negative;
    for (const e of document.querySelectorAll(".label-pos")) e.textContent = positive;
    this.renderReview(answer.review, answer.threshold);
    this.result.dataset.costs = costs.c_review === undefined
      ? `${costs.c_fp},${costs.c_fn}`
      : `${costs.c_fp},${costs.c_fn},${costs.c_review}`;
    this.result.dataset.state = "ready";
  }

  showReview(on) {
    for (const e of document.querySelectorAll("#whatif-result .review-only")) e.hidden = !on;
  }

  /** The answer's `review` (null without c_review): band, rows reviewed, cost, drawn. */
  renderReview(review, threshold) {
    this.showReview(Boolean(review));
    if (!review) {
      $("#review-chart").replaceChildren();
      return;
    }
    const band = $("#whatif-band");
    band.textContent = review.band
      ? `${formatNumber(review.band[0], 4)} to ${formatNumber(review.band[1], 4)}`
      : "none (review never costs least)";
    band.dataset.value = review.band ? review.band.join(",") : "none";
    setFigure($("#whatif-reviewed"), review.reviewed, 0);
    setFigure($("#whatif-review-total"), review.total_cost, 2);
    $("#review-chart").replaceChildren(bandChart(review.band, threshold));
  }

  renderMatrix(answer, matrix) {
    this.figures(answer);
    answer.confusion_matrix.forEach((row, i) => row.forEach((count, j) => {
      setFigure($(`#cmk-${i}-${j}`), count, 0);
    }));
    this.result.dataset.costs = JSON.stringify(matrix);
    this.result.dataset.state = "ready";
  }
}
