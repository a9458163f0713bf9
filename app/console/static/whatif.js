// The "what if" panel: two log-scale cost sliders -> GET .../whatif -> threshold,
// confusion matrix and expected cost on the version's evaluation rows (out of fold or held out).

import { api, modelPath } from "./api.js";
import { $, showError, setFigure } from "./dom.js";

const DEBOUNCE_MS = 100;

/** Slider position (log10) -> cost, rounded to 2 significant digits (what is sent). */
export function costAt(position) {
  return Number((10 ** Number(position)).toPrecision(2));
}

export class WhatIf {
  constructor() {
    this.target = null; // {name, version}
    this.sequence = 0; // number of the latest request; older answers are ignored
    this.controller = null;
    this.timer = null;
    this.sliders = { c_fp: $("#c-fp"), c_fn: $("#c-fn") };
    this.outputs = { c_fp: $("#c-fp-value"), c_fn: $("#c-fn-value") };
    this.result = $("#whatif-result");
    this.error = $("#whatif-error");
    for (const slider of Object.values(this.sliders)) {
      slider.addEventListener("input", () => this.changed());
      slider.addEventListener("change", () => this.changed());
    }
    this.showCosts();
  }

  costs() {
    return { c_fp: costAt(this.sliders.c_fp.value), c_fn: costAt(this.sliders.c_fn.value) };
  }

  showCosts() {
    const costs = this.costs();
    for (const [name, output] of Object.entries(this.outputs)) {
      output.textContent = String(costs[name]);
      this.sliders[name].setAttribute("aria-valuetext", String(costs[name]));
      output.dataset.value = String(costs[name]);
    }
    return costs;
  }

  /** Show what-if numbers for another version (or none). */
  select(name, version) {
    this.target = version === null ? null : { name, version };
    this.clear();
    if (this.target) this.request();
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
    for (const id of ["threshold", "mean-cost", "total-cost", "accuracy", "n"]) {
      setFigure($(`#whatif-${id}`), null);
    }
    for (const id of ["tn", "fp", "fn", "tp"]) setFigure($(`#cm-${id}`), null);
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
    const query = new URLSearchParams({ c_fp: costs.c_fp, c_fn: costs.c_fn });
    try {
      const answer = await api(`${modelPath(target.name, target.version)}/whatif?${query}`, {
        signal: this.controller.signal,
      });
      if (sequence !== this.sequence) return; // a newer request was sent meanwhile
      this.render(answer, costs);
    } catch (error) {
      if (error.name === "AbortError" || sequence !== this.sequence) return;
      this.clear();
      showError(this.error, error);
      this.result.dataset.state = "error";
    }
  }

  render(answer, costs) {
    showError(this.error, null);
    setFigure($("#whatif-threshold"), answer.threshold, 4);
    setFigure($("#whatif-mean-cost"), answer.mean_cost, 4);
    setFigure($("#whatif-total-cost"), answer.total_cost, 2);
    setFigure($("#whatif-accuracy"), answer.accuracy, 4);
    setFigure($("#whatif-n"), answer.n, 0);
    const [[tn, fp], [fn, tp]] = answer.confusion_matrix;
    setFigure($("#cm-tn"), tn, 0);
    setFigure($("#cm-fp"), fp, 0);
    setFigure($("#cm-fn"), fn, 0);
    setFigure($("#cm-tp"), tp, 0);
    const [negative, positive] = answer.labels.map(String);
    for (const el of document.querySelectorAll(".label-neg")) el.textContent = negative;
    for (const el of document.querySelectorAll(".label-pos")) el.textContent = positive;
    this.result.dataset.costs = `${costs.c_fp},${costs.c_fn}`;
    this.result.dataset.state = "ready";
  }
}
