// The /v1 API from the browser: the API key from sessionStorage, errors as readable text.

const KEY_STORAGE = "costwise.apiKey";

// The service's root: the page is served at <root>/console.
export const ROOT = window.location.pathname.replace(/\/console\/?$/, "");

export function getKey() {
  return window.sessionStorage.getItem(KEY_STORAGE) || "";
}

export function setKey(key) {
  if (key) window.sessionStorage.setItem(KEY_STORAGE, key);
  else window.sessionStorage.removeItem(KEY_STORAGE);
}

/** An error answer of the API: {detail, code, field} plus the HTTP status. */
export class ApiError extends Error {
  constructor(status, code, detail, field, body = null) {
    super(ApiError.describe(status, code, detail, field));
    this.status = status;
    this.code = code;
    this.detail = detail;
    this.field = field;
    this.body = body; // the whole answer (e.g. a refused promotion's evidence)
  }

  static describe(status, code, detail, field) {
    const hint = {
      401: " Enter an API key above.",
      403: " Use a key with a higher role.",
    }[status] || "";
    const where = field ? ` (field: ${field})` : "";
    return `${status} ${code}: ${String(detail).replace(/\.\s*$/, "")}${where}.${hint}`;
  }
}

async function errorFrom(response) {
  let body = null;
  try {
    body = await response.json();
  } catch {
    // not JSON (e.g. a proxy's HTML page): fall back to the status text
  }
  if (body && typeof body.detail === "string") {
    return new ApiError(response.status, body.code || "ERROR", body.detail, body.field || null, body);
  }
  const text = response.statusText || "request failed";
  return new ApiError(response.status, "HTTP_ERROR", text, null);
}

/**
 * Call the API: `path` starts with /v1. Resolves to the parsed JSON body (or a Blob when
 * `as` is "blob"); rejects with ApiError on an error status, or Error on a network failure.
 */
export async function api(path, { method = "GET", body, signal, as = "json", accept } = {}) {
  const headers = {};
  const key = getKey();
  if (key) headers.Authorization = `Bearer ${key}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (accept) headers.Accept = accept;
  let response;
  try {
    response = await fetch(ROOT + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new Error(`The service did not answer (${error.message}).`);
  }
  if (!response.ok) throw await errorFrom(response);
  if (response.status === 204) return null;
  return as === "blob" ? response.blob() : response.json();
}

/** A URL the API returned (e.g. a plot's svg_url), as a path for api(). */
export function apiPath(url) {
  const parsed = new URL(url, window.location.origin + ROOT + "/");
  const path = parsed.pathname + parsed.search;
  return ROOT && path.startsWith(ROOT + "/") ? path.slice(ROOT.length) : path;
}

/** Path of a model (and version) with each part URL-encoded. */
export function modelPath(name, version) {
  const base = `/v1/models/${encodeURIComponent(name)}`;
  return version === undefined ? base : `${base}/versions/${encodeURIComponent(version)}`;
}
