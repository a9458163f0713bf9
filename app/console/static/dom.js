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

/** A number for people: `digits` decimals (or significant digits for tiny/huge values). */
export function formatNumber(value, digits = 4) {
  if (value === null || value === undefined || Number.isNaN(value)) return "–";
  if (!Number.isFinite(value)) return value > 0 ? "∞" : "−∞";
  if (Number.isInteger(value) && Math.abs(value) < 1e15) return value.toLocaleString("en-US");
  return value.toFixed(digits);
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
