// Small DOM helpers. API data only ever enters the page as text (textContent).

export function $(selector) {
  const element = document.querySelector(selector);
  if (!element) throw new Error(`console page has no ${selector}`);
  return element;
}

/** Create an element with attributes and children (strings become text nodes). */
export function el(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("data-")) element.dataset[toCamel(name.slice(5))] = String(value);
    else if (name === "class") element.className = value;
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  element.append(...children.filter((c) => c !== null && c !== undefined));
  return element;
}

function toCamel(name) {
  return name.replace(/-([a-z])/g, (_, c) => c.toUpperCase());
}

/** A number for people: always `digits` decimals, so that a column or a row of figures
 * reads in one format (1 is "1.0000" next to "0.9512"); `digits` 0: a count, "1,234". */
export function formatNumber(value, digits = 4) {
  if (value === null || value === undefined || Number.isNaN(value)) return "–";
  if (!Number.isFinite(value)) return value > 0 ? "∞" : "−∞";
  if (digits === 0 && Math.abs(value) < 1e15) {
    return Math.round(value).toLocaleString("en-US");
  }
  return value.toFixed(digits);
}

/** Decimals that tell every value of `values` apart and show each exactly (at most 10):
 * axis ticks 0.0025, 0.005, 0.0075 need 4, so none repeats after rounding. */
export function tickDecimals(values) {
  let decimals = 0;
  for (const v of values) {
    const text = Number(v.toPrecision(12)).toFixed(10).replace(/0+$/, "");
    const dot = text.indexOf(".");
    if (dot >= 0) decimals = Math.max(decimals, text.length - dot - 1);
  }
  return Math.min(decimals, 10);
}

/** Show a number in `element`: formatted text, exact value in data-value (for tests/tools). */
export function setFigure(element, value, digits = 4) {
  element.textContent = formatNumber(value, digits);
  if (value === null || value === undefined) delete element.dataset.value;
  else element.dataset.value = String(value);
}

/** Show an error's message in an alert element, or hide it (error null). */
export function showError(element, error) {
  element.hidden = !error;
  element.textContent = error ? error.message || String(error) : "";
}
