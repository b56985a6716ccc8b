// Errors on the page: every API error with its request id.
import { ApiError } from "./api.js";
import { h } from "./dom.js";

const errorBox = document.getElementById("error");

// showError puts an API error on the page with its request id, which finds it in the API's log.
export function showError(err) {
  errorBox.replaceChildren();
  if (!err) { errorBox.hidden = true; return; }
  const parts = [h("strong", {}, err instanceof ApiError ? `${err.status} ${err.code}` : "Error"), " ", err.message];
  if (err instanceof ApiError) {
    parts.push(" ", h("span", { class: "rid", "data-request-id": err.requestId }, `request id: ${err.requestId || "(none given)"}`));
    for (const f of err.fields) parts.push(h("div", {}, `${f.field}: ${f.problem}`));
    for (const v of err.violations) parts.push(h("div", {}, `${v.field || v.path || ""} ${v.message || JSON.stringify(v)}`));
  }
  errorBox.append(...parts);
  errorBox.hidden = false;
}
