// Small SVG charts for the monitoring panel: time series and a reliability diagram.
// No library: the page's CSP allows no inline style, so colours are SVG attributes.
// Every plotted point carries its exact value (data-value) and the chart its scale
// (data-y-min, data-y-max, data-top, data-bottom), so a test can check where it is drawn.

import { el, formatNumber, tickDecimals } from "./dom.js";

const NS = "http://www.w3.org/2000/svg";
const WIDTH = 460;
const HEIGHT = 190;
const MARGIN = { left: 56, right: 12, top: 10, bottom: 26 };
// Colour-blind-safe palette (Okabe-Ito), one colour per version (or class).
export const COLOURS = ["#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000"];

export function colour(index) {
  return COLOURS[index % COLOURS.length];
}

/** An SVG element with attributes and children. */
export function svg(tag, attributes = {}, ...children) {
  const element = document.createElementNS(NS, tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    element.setAttribute(name, String(value));
  }
  element.append(...children.filter((c) => c !== null && c !== undefined));
  return element;
}

/** About five round tick values covering [min, max]. */
export function ticks(min, max, count = 5) {
  if (!(max > min)) return [min];
  const raw = (max - min) / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((f) => f * magnitude).find((s) => s >= raw);
  const out = [];
  for (let v = Math.ceil(min / step) * step; v <= max + step * 1e-9; v += step) {
    out.push(Number(v.toPrecision(12)));
  }
  return out;
}

/** [lo, hi] of the values, from 0 (or `fixed` ends), rounded out to a tick. */
function yDomain(values, fixed) {
  let lo = fixed.min ?? Math.min(0, ...values);
  let hi = fixed.max ?? Math.max(...values, ...(fixed.reference === undefined ? [] : [fixed.reference]));
  if (!(hi > lo)) hi = lo + 1;
  if (fixed.max === undefined) {
    const t = ticks(lo, hi);
    const step = t.length > 1 ? t[1] - t[0] : hi - lo;
    if (t[t.length - 1] < hi) hi = t[t.length - 1] + step;
    else hi = t[t.length - 1];
  }
  return [lo, hi];
}

function legend(series) {
  const items = series.map((s) =>
    el("li", { "data-series": s.key, "data-version": s.version },
      legendSwatch(s), s.label));
  return el("ul", { class: "legend" }, ...items);
}

function legendSwatch(s) {
  return svg("svg", { width: 22, height: 10, "aria-hidden": "true", class: "swatch" },
    svg("line", { x1: 1, y1: 5, x2: 21, y2: 5, stroke: s.colour, "stroke-width": 2,
      "stroke-dasharray": s.dashed ? "4 3" : null }));
}

function empty(figure, message) {
  figure.dataset.state = "empty";
  figure.append(el("p", { class: "chart-empty" }, message));
  return figure;
}

function frame(title, id) {
  return el("figure", { class: "chart", "data-chart": id },
    el("figcaption", {}, title));
}

/**
 * A time-series chart.
 * series: [{key, label, version, colour, dashed, points: [{t, start, value}]}]; a null value
 * is a gap. options: {width (ms, the bucket), format(t), yMin, yMax, reference (a horizontal
 * line, e.g. 1 for a ratio), digits, emptyText, markers: [{t, start, value, version, text}]}.
 */
export function timeChart(id, title, series, options) {
  const figure = frame(title, id);
  const values = series.flatMap((s) => s.points.map((p) => p.value)).filter((v) => v !== null);
  if (values.length === 0) return empty(figure, options.emptyText);
  const times = series.flatMap((s) => s.points.map((p) => p.t));
  const half = options.width / 2;
  const t0 = Math.min(...times) - half;
  const t1 = Math.max(...times) + half;
  const [y0, y1] = yDomain(values, { min: options.yMin, max: options.yMax, reference: options.reference });
  const left = MARGIN.left;
  const right = WIDTH - MARGIN.right;
  const top = MARGIN.top;
  const bottom = HEIGHT - MARGIN.bottom;
  const x = (t) => left + ((t - t0) / (t1 - t0)) * (right - left);
  const y = (v) => bottom - ((v - y0) / (y1 - y0)) * (bottom - top);
  const chart = svg("svg", {
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img", "aria-label": title,
    "data-y-min": y0, "data-y-max": y1, "data-top": top, "data-bottom": bottom,
    "data-t-min": t0, "data-t-max": t1, "data-left": left, "data-right": right,
  });
  // axes and grid
  const yTicks = ticks(y0, y1);
  const decimals = tickDecimals(yTicks); // as many as the step needs: no label repeats
  for (const v of yTicks) {
    chart.append(
      svg("line", { x1: left, x2: right, y1: y(v), y2: y(v), class: "grid-line" }),
      svg("text", { x: left - 4, y: y(v) + 4, "text-anchor": "end", class: "tick" },
        formatNumber(v, decimals)),
    );
  }
  const starts = [...new Set(times)].sort((a, b) => a - b);
  const every = Math.max(1, Math.ceil(starts.length / 5));
  starts.forEach((t, i) => {
    if (i % every !== 0) return;
    chart.append(svg("text", { x: x(t), y: HEIGHT - 8, "text-anchor": "middle", class: "tick" },
      options.format(t)));
  });
  chart.append(svg("line", { x1: left, x2: left, y1: top, y2: bottom, class: "axis" }),
    svg("line", { x1: left, x2: right, y1: bottom, y2: bottom, class: "axis" }));
  if (options.reference !== undefined) {
    chart.append(svg("line", { x1: left, x2: right, y1: y(options.reference),
      y2: y(options.reference), class: "reference" }));
  }
  // series: a line through consecutive non-null points, and every point as a circle
  for (const s of series) {
    let run = [];
    const flush = () => {
      if (run.length > 1) {
        chart.append(svg("polyline", {
          points: run.map((p) => `${x(p.t)},${y(p.value)}`).join(" "), fill: "none",
          stroke: s.colour, "stroke-width": 1.8, "stroke-dasharray": s.dashed ? "5 4" : null,
        }));
      }
      run = [];
    };
    for (const p of s.points) {
      if (p.value === null) flush();
      else run.push(p);
    }
    flush();
    for (const p of s.points) {
      if (p.value === null) continue;
      chart.append(svg("circle", {
        cx: x(p.t), cy: y(p.value), r: 3, fill: s.dashed ? "#fff" : s.colour, stroke: s.colour,
        "stroke-width": 1.5, class: "point", "data-series": s.key, "data-version": s.version,
        "data-start": p.start, "data-value": p.value,
      }, svg("title", {}, `${s.label}, ${options.format(p.t)}: ${formatNumber(p.value, options.digits ?? 4)}`)));
    }
  }
  for (const m of options.markers || []) {
    chart.append(svg("circle", {
      cx: x(m.t), cy: y(m.value), r: 7, class: "alarm-marker", "data-version": m.version,
      "data-start": m.start,
    }, svg("title", {}, m.text)));
  }
  figure.append(chart, legend(series));
  return figure;
}

/**
 * A reliability diagram: per series, the observed share of positives against the mean
 * predicted probability of each non-empty bin (a dot sized by its count), and the diagonal.
 * series: [{key, label, version, colour, bins: {mean_predicted, observed, count}}].
 */
export function reliabilityChart(id, title, series, emptyText) {
  const figure = frame(title, id);
  if (series.length === 0) return empty(figure, emptyText);
  const size = 220;
  const m = { left: 40, right: 10, top: 10, bottom: 30 };
  const x = (v) => m.left + v * (size - m.left - m.right);
  const y = (v) => size - m.bottom - v * (size - m.top - m.bottom);
  const chart = svg("svg", {
    viewBox: `0 0 ${size} ${size}`, role: "img", "aria-label": title, class: "square",
    "data-left": m.left, "data-right": size - m.right, "data-top": m.top,
    "data-bottom": size - m.bottom,
  });
  for (const v of [0, 0.25, 0.5, 0.75, 1]) {
    chart.append(
      svg("line", { x1: x(0), x2: x(1), y1: y(v), y2: y(v), class: "grid-line" }),
      svg("text", { x: x(0) - 4, y: y(v) + 4, "text-anchor": "end", class: "tick" }, v.toFixed(2)),
      svg("text", { x: x(v), y: size - m.bottom + 14, "text-anchor": "middle", class: "tick" }, v.toFixed(2)),
    );
  }
  chart.append(
    svg("line", { x1: x(0), y1: y(0), x2: x(1), y2: y(1), class: "reference" }),
    svg("text", { x: x(0.5), y: size - 2, "text-anchor": "middle", class: "tick" }, "mean predicted probability"),
  );
  for (const s of series) {
    const { mean_predicted: predicted, observed, count } = s.bins;
    const total = count.reduce((a, b) => a + b, 0) || 1;
    const points = [];
    count.forEach((n, i) => {
      if (n > 0 && predicted[i] !== null && observed[i] !== null) {
        points.push({ i, n, px: predicted[i], py: observed[i] });
      }
    });
    if (points.length > 1) {
      chart.append(svg("polyline", {
        points: points.map((p) => `${x(p.px)},${y(p.py)}`).join(" "), fill: "none",
        stroke: s.colour, "stroke-width": 1.5,
      }));
    }
    for (const p of points) {
      chart.append(svg("circle", {
        cx: x(p.px), cy: y(p.py), r: 2.5 + 6 * Math.sqrt(p.n / total), fill: s.colour,
        "fill-opacity": 0.75, class: "point", "data-series": s.key, "data-version": s.version,
        "data-bin": p.i, "data-x": p.px, "data-value": p.py, "data-count": p.n,
      }, svg("title", {}, `${s.label}, bin ${p.i + 1}: predicted ${formatNumber(p.px, 3)}, observed ${formatNumber(p.py, 3)} (${p.n} rows)`)));
    }
  }
  figure.append(chart, legend(series));
  return figure;
}
