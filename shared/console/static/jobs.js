// Jobs: the list with the API's filters, and a submission form (a job's page is job.js).
import { call } from "./api.js";
import { h, when, status, table, swap } from "./dom.js";
import { showError } from "./errors.js";
import { waitWords, ordinal } from "./words.js";

const filters = ["status", "namespace", "region", "label_selector", "name", "sort"];
const statuses = ["", "blocked", "queued", "dispatching", "pending", "running", "succeeded", "failed", "cancelled"];
const sorts = ["created_at:desc", "created_at:asc", "priority:desc", "priority:asc", "name:asc", "name:desc"];

export async function jobsView(ctx, params) {
  const q = Object.fromEntries(filters.map((f) => [f, params.get(f) || ""]));
  const field = (name, el) => h("label", {}, name, el);
  const form = h("form", { class: "filters", id: "job-filters" },
    field("status", h("select", { name: "status" }, statuses.map((s) => h("option", { value: s, selected: s === q.status }, s || "any")))),
    field("namespace", h("input", { name: "namespace", value: q.namespace })),
    field("region", h("input", { name: "region", value: q.region })),
    field("labels", h("input", { name: "label_selector", value: q.label_selector, placeholder: "team=ml" })),
    field("name", h("input", { name: "name", value: q.name, placeholder: "train-*" })),
    field("sort", h("select", { name: "sort" }, sorts.map((s) => h("option", { value: s, selected: s === q.sort }, s)))),
    h("button", { type: "submit" }, "Filter"),
    h("a", { href: "#/jobs/new", id: "new-job" }, "Submit a job"));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const p = new URLSearchParams();
    for (const [k, v] of new FormData(form)) if (v) p.set(k, v);
    location.hash = `#/jobs?${p}`;
  });
  const body = h("div", { id: "jobs" });
  ctx.render(h("h1", {}, "Jobs"), form, body);
  ctx.poll(async () => {
    const page = await call("GET", "/api/v1/jobs", { query: { ...q, limit: 100 } });
    swap(body, table(["job", "status", "why it waits", "namespace", "region", "priority", "created"],
      page.items.map((j) => h("tr", { "data-job": j.id },
        h("td", {}, h("a", { href: `#/jobs/${encodeURIComponent(j.id)}` }, j.name || j.id), h("div", { class: "muted" }, j.id)),
        h("td", {}, status(j.status)),
        h("td", {}, waitWords(j), j.queue_position ? ` ${ordinal(j.queue_position)} in line.` : ""),
        h("td", {}, j.namespace), h("td", {}, j.region || (j.regions || []).join(", ")),
        h("td", {}, j.priority), h("td", {}, when(j.created_at))))));
    showError(null);
  });
}

export async function submitView(ctx) {
  const text = h("textarea", { id: "manifest", name: "manifest", spellcheck: "false", placeholder: "apiVersion: batch/v1\nkind: Job\n…" });
  const ns = h("input", { id: "namespace", name: "namespace", placeholder: "team-a" });
  const region = h("input", { id: "region", name: "region", placeholder: "the default region" });
  const form = h("form", { id: "submit-job" },
    h("h1", {}, "Submit a job"),
    h("p", { class: "muted" }, "One or more manifests, as YAML documents or JSON; they meet the admission policy before anything is stored."),
    h("label", { class: "wide" }, "manifests", text), h("div", { class: "inline" }, h("label", {}, "namespace", ns), h("label", {}, "region", region),
      h("button", { type: "submit", id: "submit" }, "Submit")));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      const r = await call("POST", "/api/v1/manifests", { query: { namespace: ns.value, region: region.value }, body: text.value, contentType: "application/yaml" });
      location.hash = `#/jobs/${encodeURIComponent(r.job.id)}`;
    } catch (e) { showError(e); }
  });
  ctx.render(form);
}
