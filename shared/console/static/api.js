// The console's only way to the API: the documented routes of /openapi.json, with the key the
// user typed, kept in this tab's sessionStorage and nowhere else.

const keyName = "tidegate.key";

export const key = {
  get: () => sessionStorage.getItem(keyName),
  set: (k) => sessionStorage.setItem(keyName, k),
  clear: () => sessionStorage.removeItem(keyName),
};

// ApiError is an answer other than 2xx: its status, the API's error code, detail and fields,
// and the request id that finds it in the API's log.
export class ApiError extends Error {
  constructor(status, body, requestId) {
    super(body?.detail || body?.message || `HTTP ${status}`);
    this.status = status;
    this.code = body?.error || "";
    this.fields = body?.fields || [];
    this.violations = body?.violations || [];
    this.requestId = body?.request_id || requestId || "";
  }
}

// call sends one request: path under the API, query an object of filters (empty ones left out),
// body JSON unless a contentType says otherwise. It answers the parsed body, or null for 204.
export async function call(method, path, { query, body, contentType } = {}) {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(query || {})) {
    if (v !== undefined && v !== null && v !== "") url.searchParams.set(k, v);
  }
  const headers = { Accept: "application/json" };
  const k = key.get();
  if (k) headers.Authorization = `Bearer ${k}`;
  let payload;
  if (body !== undefined) {
    headers["Content-Type"] = contentType || "application/json";
    payload = contentType ? body : JSON.stringify(body);
  }
  if (method === "POST" && (path.endsWith("/jobs") || path.endsWith("/manifests"))) {
    headers["Idempotency-Key"] = crypto.randomUUID();
  }
  const res = await fetch(url, { method, headers, body: payload, credentials: "omit", cache: "no-store" });
  const rid = res.headers.get("X-Request-Id") || res.headers.get("apigw-requestid") || "";
  if (res.status === 204) return null;
  let data = null;
  const text = await res.text();
  try { data = text ? JSON.parse(text) : null; } catch { data = { detail: text.slice(0, 300) }; }
  if (!res.ok) throw new ApiError(res.status, data, rid);
  return data;
}
