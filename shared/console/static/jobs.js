// Jobs: the list with the API's filters, a job's page, and a submission form.
import { call } from "./api.js";
import { h, when, status, table, kv, pre } from "./dom.js";
import { showError } from "./errors.js";
import { family } from "./workflows.js";

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
    body.replaceChildren(table(["job", "status", "why pending", "namespace", "region", "priority", "created"],
      page.items.map((j) => h("tr", { "data-job": j.id },
        h("td", {}, h("a", { href: `#/jobs/${encodeURIComponent(j.id)}` }, j.name || j.id), h("div", { class: "muted" }, j.id)),
        h("td", {}, status(j.status)),
        h("td", {}, j.pending_reason || "", j.queue_position ? ` (#${j.queue_position} in line)` : ""),
        h("td", {}, j.namespace), h("td", {}, j.region || (j.regions || []).join(", ")),
        h("td", {}, j.priority), h("td", {}, when(j.created_at))))));
    showError(null);
  });
}

export async function jobView(ctx, id) {
  const head = h("div");
  const sections = { decisions: h("div"), placement: h("div"), pods: h("div"), events: h("div"), logs: h("div") };
  ctx.render(head, ...Object.entries(sections).map(([k, el]) => h("section", { id: k }, h("h2", {}, k), el)));
  let last = "";
  ctx.poll(async () => {
    const j = await call("GET", `/api/v1/jobs/${encodeURIComponent(id)}`);
    const fam = await family(j);
    renderJob(head, j, ctx, fam);
    const trail = await call("GET", `/api/v1/jobs/${encodeURIComponent(id)}/decisions`);
    sections.decisions.replaceChildren(decisionsTable(trail.items || []));
    sections.placement.replaceChildren(j.placement ? pre(j.placement) : h("p", { class: "muted" }, "Not placed yet."));
    // The live views read the cluster: only while the job has objects there, and once after.
    const live = ["pending", "running", "dispatching"].includes(j.status);
    if (live || last !== j.status) await liveViews(sections, id, j);
    last = j.status;
  });
}

function renderJob(head, j, ctx, fam) {
  const actions = h("div", { class: "actions" });
  const act = (label, method, path, then) => {
    const b = h("button", { type: "button", id: `job-${label.toLowerCase()}` }, label);
    b.addEventListener("click", async () => {
      try { const r = await call(method, path); if (then) then(r); } catch (e) { showError(e); }
    });
    actions.append(b);
  };
  const base = `/api/v1/jobs/${encodeURIComponent(j.id)}`;
  if (!["succeeded", "failed", "cancelled"].includes(j.status)) act("Cancel", "DELETE", base);
  else act("Retry", "POST", `${base}/retry`, (r) => { if (r?.job?.id) location.hash = `#/jobs/${r.job.id}`; });
  head.replaceChildren(
    h("h1", {}, j.name || j.id, " ", status(j.status)),
    kv([["id", j.id], ["namespace", j.namespace], ["region", j.region || (j.regions || []).join(", ")], ["priority", j.priority],
      ["why pending", j.pending_reason], ["short of", j.pending_resource], ["place in line", j.queue_position],
      ["demand", Object.entries(j.demand || {}).sort().map(([k, v]) => `${k} ${v}`).join(", ")],
      ["flavor", j.flavor || Object.entries(j.node_selector || {}).map(([k, v]) => `${k}=${v}`).join(", ")],
      ["spot gate", j.spot_gate ? `${j.spot_gate.instance_type}: observed ${j.spot_gate.observed_price ?? "unknown"}, cap ${j.spot_gate.max_price}` : ""],
      ["attempt", j.attempt], ["dispatch error", j.dispatch_error], ["created", when(j.created_at)], ...fam.rows]),
    actions,
    fam.children ? h("section", { id: "children" }, h("h2", {}, "children"), fam.children) : "",
    h("h2", {}, "status history"),
    h("ol", { class: "timeline", id: "timeline" }, (j.status_history || []).map((t) =>
      h("li", { "data-status": t.status }, status(t.status), " ", h("span", { class: "muted" }, when(t.at)), t.reason ? ` — ${t.reason}` : ""))));
}

// decisionsTable is what Tidegate decided about the job, oldest first, beside its timeline: each
// admission, wait, eviction, region and retry, and what it was decided from.
function decisionsTable(items) {
  if (!items.length) return h("p", { class: "muted" }, "Nothing decided yet.");
  const from = (d) => [
    ...Object.entries(d.quota || {}).sort().map(([r, q]) => `${r} ${q.held} of ${q.nominal}`),
    d.resource ? `short of ${d.resource}` : "",
    d.price && d.price.observed_price != null ? `${d.price.instance_type} at ${d.price.observed_price}, cap ${d.price.max_price}` : "",
    d.evicted ? `${d.evicted} evicted` : "",
    d.rule ? `retry ${d.rule}` : "",
  ].filter(Boolean).join("; ");
  return table(["when", "decision", "reason", "where", "from"], [...items].reverse().map((d) =>
    h("tr", { "data-decision": d.kind }, h("td", {}, when(d.at)), h("td", {}, d.kind), h("td", {}, d.reason || ""),
      h("td", {}, [d.region, d.flavor].filter(Boolean).join("/")), h("td", {}, from(d)))));
}

async function liveViews(sections, id, j) {
  const base = `/api/v1/jobs/${encodeURIComponent(id)}`;
  const soft = async (path) => { try { return await call("GET", path); } catch (e) { showError(e); return null; } };
  const [pods, events, logs] = await Promise.all([soft(`${base}/pods`), soft(`${base}/events`), soft(`${base}/logs`)]);
  if (pods) sections.pods.replaceChildren(table(["pod", "phase", "node", "started"], (pods.items || []).map((p) =>
    h("tr", {}, h("td", {}, p.name), h("td", {}, p.phase), h("td", {}, p.node_name || p.node || ""), h("td", {}, when(p.start_time || p.started_at))))));
  if (events) sections.events.replaceChildren(table(["last seen", "type", "reason", "object", "message"], (events.items || []).map((e) =>
    h("tr", {}, h("td", {}, when(e.last_seen)), h("td", {}, e.type), h("td", {}, e.reason), h("td", {}, e.object || e.involved_object || ""), h("td", {}, e.message)))));
  if (logs) sections.logs.replaceChildren(h("p", { class: "muted" }, `from ${logs.from}${logs.pod ? `, pod ${logs.pod}` : ""}`), pre((logs.lines || []).join("\n")));
  else if (j.log_tail) sections.logs.replaceChildren(pre(j.log_tail.join("\n")));
}

export async function submitView(ctx) {
  const text = h("textarea", { id: "manifest", name: "manifest", spellcheck: "false", placeholder: "apiVersion: batch/v1\nkind: Job\n…" });
  const ns = h("input", { id: "namespace", name: "namespace", placeholder: "team-a" });
  const region = h("input", { id: "region", name: "region", placeholder: "the default region" });
  const form = h("form", { id: "submit-job" },
    h("h1", {}, "Submit a job"),
    h("p", { class: "muted" }, "One or more manifests, as YAML documents or JSON; they meet the admission policy before anything is stored."),
    text, h("div", { class: "inline" }, h("label", {}, "namespace", ns), h("label", {}, "region", region),
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
