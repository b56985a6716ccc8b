// The audit log: every change a principal of the tenant asked for (the operator's: every
// tenant's), newest first (the API's order=newest), with who asked, the route, and how it ended,
// a page at a time with its cursor: "Show older" reads the next.
import { call } from "./api.js";
import { h, when } from "./dom.js";
import { showError } from "./errors.js";
import { outcome } from "./words.js";

const hour = 3600 * 1000;
const rangeDays = 30; // the API's own range when from is not given
const screenful = 50;

export async function auditView(ctx, params) {
  const q = { action: params.get("action") || "", from: params.get("from") || "", to: params.get("to") || "" };
  const end = q.to ? Date.parse(`${q.to}T00:00:00Z`) + 24 * hour : Date.now();
  const start = q.from ? Date.parse(`${q.from}T00:00:00Z`) : end - rangeDays * 24 * hour;
  const rows = h("tbody"), more = h("div", { class: "actions" }), said = h("p", { class: "muted", id: "audit-count", "aria-live": "polite" });
  const list = h("table", { id: "audit" }, h("thead", {}, h("tr", {}, ["when", "who", "change", "path", "outcome", "request id"]
    .map((x) => h("th", { scope: "col" }, x)))), rows);
  ctx.render(h("h1", {}, "Audit log"),
    h("p", { class: "muted" }, "Every change asked of the API on your tenant's behalf, recorded before it was made, newest first."),
    filterForm(q), said, list, more);
  const reader = { cursor: "", count: 0 };
  const older = h("button", { type: "button", id: "audit-older", hidden: true }, "Show older");
  more.append(older);
  let busy = false; // the button stays enabled, and focused, while older records are read
  const readOn = async () => {
    if (busy) return;
    busy = true;
    try { await readMore(); } finally { busy = false; }
  };
  const readMore = async () => {
    const page = await call("GET", "/api/v1/audit", { query: {
      from: new Date(start).toISOString(), to: new Date(end).toISOString(), action: q.action,
      order: "newest", limit: screenful, cursor: reader.cursor } });
    rows.append(...page.items.map(row));
    reader.count += page.items.length;
    reader.cursor = page.next_cursor || "";
    said.textContent = reader.count ? `${reader.count} record${reader.count === 1 ? "" : "s"} shown, newest first.` : "No change recorded in this range.";
    older.hidden = !reader.cursor;
  };
  older.addEventListener("click", async () => { try { await readOn(); } catch (e) { showError(e); } });
  await readOn();
}

function row(r) {
  return h("tr", { "data-action": r.action, "data-at": r.at },
    h("td", {}, when(r.at)), h("td", {}, r.principal, r.tenant ? h("div", { class: "muted" }, `tenant ${r.tenant}`) : ""),
    h("td", {}, r.action), h("td", {}, r.path), h("td", { "data-status": r.status }, outcome(r.status)),
    h("td", { class: "rid" }, r.request_id));
}

function filterForm(q) {
  const field = (label, el) => h("label", {}, label, el);
  const form = h("form", { class: "filters", id: "audit-filters" },
    field("from (day, UTC)", h("input", { type: "date", name: "from", value: q.from })),
    field("to (day, UTC, included)", h("input", { type: "date", name: "to", value: q.to })),
    field("change", h("input", { name: "action", value: q.action, placeholder: "DELETE /api/v1/jobs/{id}", size: 28 })),
    h("button", { type: "submit" }, "Show"));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const p = new URLSearchParams();
    for (const [k, v] of new FormData(form)) if (v) p.set(k, v);
    location.hash = `#/audit?${p}`;
  });
  return form;
}
