// The console: models -> versions (metrics, aliases) -> plots and what-if; alias moves;
// monitoring of the logged predictions per model (monitor.js); champion and challenger
// compared by realised cost (compare.js).

import { api, apiPath, getKey, modelPath, setKey } from "./api.js";
import { $, el, setFigure, showError } from "./dom.js";
import { Compare } from "./compare.js";
import { Monitor } from "./monitor.js";
import { WhatIf } from "./whatif.js";

const METRICS = [
  ["brier", 4],
  ["auc", 4],
  ["accuracy", 4],
];

const state = {
  model: null, // selected model name
  version: null, // selected version number
  versions: [], // VersionOut of the selected model
  plotUrls: [], // blob: URLs shown now (revoked when replaced)
  plotsRequest: 0,
  versionsRequest: 0,
};
const whatIf = new WhatIf();
// a recalibration made a new version: list it (the selected version stays selected)
const monitor = new Monitor({ onVersionCreated: () => reloadModel() });
const compare = new Compare({ onPromoted: () => reloadModel() });

/** alias -> version, from the versions' alias lists. */
function aliasesOf(versions) {
  return Object.fromEntries(versions.flatMap((v) => v.aliases.map((a) => [a, v.version])));
}

// ------------------------------------------------------------------ API key
function setUpKey() {
  const input = $("#api-key");
  input.value = getKey();
  $("#key-form").addEventListener("submit", (event) => {
    event.preventDefault();
    setKey(input.value.trim());
    reload();
  });
  $("#clear-key").addEventListener("click", () => {
    input.value = "";
    setKey("");
    reload();
  });
}

async function reloadModel() {
  await loadModels();
  if (state.model) await selectModel(state.model, state.version);
}

function reload() {
  loadModels().then(() => {
    if (state.model) selectModel(state.model, state.version);
  });
}

// ------------------------------------------------------------------- models
async function loadModels() {
  const body = $("#models tbody");
  const panel = $("#models-panel");
  panel.dataset.state = "loading";
  try {
    const { models } = await api("/v1/models?limit=1000");
    showError($("#models-error"), null);
    body.replaceChildren(...models.map(modelRow));
    $("#models-empty").hidden = models.length > 0;
    panel.dataset.state = "ready";
  } catch (error) {
    body.replaceChildren();
    showError($("#models-error"), error);
    panel.dataset.state = "error";
  }
}

function modelRow(model) {
  const aliases = Object.entries(model.aliases)
    .map(([alias, version]) => `${alias} → v${version}`)
    .join(", ");
  const button = el("button", { type: "button", class: "link", "data-model": model.name },
    model.name);
  button.addEventListener("click", () => selectModel(model.name, null));
  // Versions are numbered 1, 2, ... per model and never deleted: the latest is the count.
  return el(
    "tr",
    { "data-model": model.name, "aria-selected": String(model.name === state.model) },
    el("td", {}, button),
    el("td", { class: "num", "data-field": "versions" }, String(model.latest_version ?? 0)),
    el("td", { "data-field": "aliases" }, aliases || "–"),
  );
}

function markSelected(selector, attribute, value) {
  for (const row of document.querySelectorAll(selector)) {
    row.setAttribute("aria-selected", String(row.dataset[attribute] === String(value)));
  }
}

// ----------------------------------------------------------------- versions
async function selectModel(name, keepVersion) {
  if (name !== state.model) $("#alias-message").textContent = "";
  state.model = name;
  markSelected("#models tbody tr", "model", name);
  $("#selected-model").textContent = `of ${name}`;
  $("#versions-hint").hidden = true;
  const panel = $("#versions-panel");
  panel.dataset.state = "loading";
  const request = ++state.versionsRequest;
  try {
    const { versions } = await api(`${modelPath(name)}/versions?limit=1000`);
    if (request !== state.versionsRequest) return;
    state.versions = versions;
    showError($("#versions-error"), null);
    $("#versions tbody").replaceChildren(...versions.map(versionRow));
    $("#versions").hidden = false;
    fillAliasForm(versions);
    panel.dataset.state = "ready";
    monitor.select(name, versions);
    compare.select(name, versions, aliasesOf(versions));
    const keep = versions.find((v) => v.version === keepVersion);
    if (keep) markSelected("#versions tbody tr", "version", keep.version);
    else selectVersion(null);
  } catch (error) {
    if (request !== state.versionsRequest) return;
    $("#versions").hidden = true;
    $("#alias-form").hidden = true;
    $("#aliases-hint").hidden = false;
    showError($("#versions-error"), error);
    panel.dataset.state = "error";
    selectVersion(null);
    monitor.select(null, []);
    compare.select(null, [], {});
  }
}

function metricCell(version, name, digits) {
  const cell = el("td", { class: "num", "data-metric": name });
  setFigure(cell, version.metrics[name] ?? null, digits);
  return cell;
}

function calibrationText(calibration) {
  if (!calibration || !calibration.method) return "none";
  return calibration.split ? `${calibration.method} (${calibration.split})` : calibration.method;
}

/** Which rows the version's metrics were measured on: out of fold (every training row,
 * scored by models that never saw it) or held out (rows kept out of training, or out of
 * the recalibration's fit). */
export function evaluationOf(version) {
  const m = version.metrics || {};
  const n = m.n_evaluation;
  const rows = typeof n === "number" ? ` (${n.toLocaleString("en-US")} rows)` : "";
  if (m.evaluation === "out_of_fold") return `out of fold${rows}`;
  if (version.calibration?.split === "recalibration") return `held out of recalibration${rows}`;
  return `held out${rows}`;
}

function evaluationCell(version) {
  const text = evaluationOf(version);
  return el("td", { "data-field": "evaluation",
    "data-evaluation": text.startsWith("out of fold") ? "out_of_fold" : "holdout" }, text);
}

/** "2026-11-27 14:03" in the browser's time zone (the full time in the cell's title). */
function shortTime(iso) {
  const t = new Date(iso);
  const two = (n) => String(n).padStart(2, "0");
  return `${t.getFullYear()}-${two(t.getMonth() + 1)}-${two(t.getDate())} `
    + `${two(t.getHours())}:${two(t.getMinutes())}`;
}

function versionRow(version) {
  const button = el("button", { type: "button", class: "link", "data-version": version.version,
    "aria-label": `Version ${version.version}` }, `v${version.version}`);
  button.addEventListener("click", () => selectVersion(version.version));
  const seconds = el("td", { class: "num", "data-metric": "training_seconds" });
  setFigure(seconds, version.training_seconds, 2);
  seconds.append(" s");
  return el(
    "tr",
    { "data-version": version.version, "aria-selected": String(version.version === state.version) },
    el("td", {}, button),
    el("td", { "data-field": "algorithm" }, version.algorithm),
    el("td", { "data-field": "calibration" }, calibrationText(version.calibration)),
    ...METRICS.map(([name, digits]) => metricCell(version, name, digits)),
    evaluationCell(version),
    seconds,
    el("td", { "data-field": "created_at", title: version.created_at },
      shortTime(version.created_at)),
    el("td", { "data-field": "aliases" }, version.aliases.join(", ") || "–"),
  );
}

function selectVersion(version) {
  state.version = version;
  markSelected("#versions tbody tr", "version", version);
  $("#selected-version").textContent = version === null ? "" : `of ${state.model} v${version}`;
  $("#plots-hint").hidden = version !== null;
  if (version !== null) $("#alias-version").value = String(version);
  const chosen = state.versions.find((v) => v.version === version);
  whatIf.select(state.model, version, chosen?.data?.classes ?? []);
  loadPlots(state.model, version);
}

// -------------------------------------------------------------------- plots
function revokePlots() {
  for (const url of state.plotUrls) URL.revokeObjectURL(url);
  state.plotUrls = [];
}

async function loadPlots(name, version) {
  const request = ++state.plotsRequest;
  const container = $("#plots");
  const panel = $("#plots-panel");
  revokePlots();
  container.replaceChildren();
  showError($("#plots-error"), null);
  const note = $("#plots-note");
  note.hidden = true;
  note.replaceChildren();
  if (version === null) {
    panel.dataset.state = "idle";
    return;
  }
  panel.dataset.state = "loading";
  try {
    const { plots } = await api(`${modelPath(name, version)}/plots`);
    if (request !== state.plotsRequest) return;
    // Fetched with the API key (an <img src> could not send it), shown from blob: URLs.
    const figures = await Promise.all(plots.map((plot) => plotFigure(plot)));
    if (request !== state.plotsRequest) {
      for (const figure of figures) URL.revokeObjectURL(figure.querySelector("img").src);
      return;
    }
    state.plotUrls = figures.map((figure) => figure.querySelector("img").src);
    container.replaceChildren(...figures);
    panel.dataset.state = "ready";
  } catch (error) {
    if (request !== state.plotsRequest) return;
    if (error.status === 404) {
      // the version has no plots (no evaluation rows): say why, neutrally
      showNoPlots(note, name, version, error);
      panel.dataset.state = "empty";
      return;
    }
    showError($("#plots-error"), error);
    panel.dataset.state = "error";
  }
}

/** Why a version has no plots (the API's reason), and for a recalibrated version a link to
 * its parent's: they share the booster, only the calibration map differs. */
function showNoPlots(note, name, version, error) {
  const v = state.versions.find((x) => x.version === version);
  const children = [el("p", {}, `No plots for v${version}: ${error.detail || error.message}`)];
  if (v && v.parent_version) {
    const link = el("button", { type: "button", class: "link", "data-parent": v.parent_version },
      `the plots of v${v.parent_version}`);
    link.addEventListener("click", () => selectVersion(v.parent_version));
    children.push(el("p", {}, `v${version} recalibrates v${v.parent_version} (same booster, `
      + "a new calibration map): see ", link, "."));
  }
  note.replaceChildren(...children);
  note.hidden = false;
}

async function plotFigure(plot) {
  const blob = await api(apiPath(plot.svg_url), { as: "blob", accept: "image/svg+xml" });
  const svg = new Blob([blob], { type: "image/svg+xml" });
  const img = el("img", { src: URL.createObjectURL(svg), alt: plot.title, "data-kind": plot.kind });
  return el("figure", { class: "plot", "data-kind": plot.kind }, img,
    el("figcaption", {}, plot.title));
}

// ------------------------------------------------------------------ aliases
function fillAliasForm(versions) {
  const form = $("#alias-form");
  const select = $("#alias-version");
  select.replaceChildren(...versions.map((v) => el("option", { value: v.version },
    `v${v.version}${v.aliases.length ? ` (${v.aliases.join(", ")})` : ""}`)));
  if (state.version !== null) select.value = String(state.version);
  const names = new Set(versions.flatMap((v) => v.aliases));
  $("#alias-names").replaceChildren(...[...names].map((n) => el("option", { value: n })));
  form.hidden = versions.length === 0;
  $("#aliases-hint").hidden = !form.hidden;
}

async function moveAlias(event) {
  event.preventDefault();
  const alias = $("#alias-name").value.trim();
  const version = Number($("#alias-version").value);
  const message = $("#alias-message");
  const form = $("#alias-form");
  message.className = "";
  message.textContent = "Moving…";
  form.dataset.state = "loading";
  try {
    const answer = await api(`${modelPath(state.model)}/aliases/${encodeURIComponent(alias)}`, {
      method: "PUT",
      body: { version },
    });
    message.textContent = `Alias ${answer.alias} now points to v${answer.version}.`;
    form.dataset.state = "ready";
    await loadModels();
    await selectModel(state.model, state.version);
  } catch (error) {
    message.className = "error";
    message.textContent = error.message || String(error);
    form.dataset.state = "error";
  }
}

// --------------------------------------------------------------------- start
setUpKey();
$("#refresh-models").addEventListener("click", () => reload());
$("#alias-form").addEventListener("submit", moveAlias);
loadModels();
