// A workflow's page: its graph, each job a box coloured by its status under the steps it comes
// after (columns by depth), redrawn as the jobs move; and a job's place in its array or workflow.
import { call } from "./api.js";
import { h, s, status, table, kv, when } from "./dom.js";
import { showError } from "./errors.js";

const BOX_W = 150, BOX_H = 40, GAP_X = 60, GAP_Y = 16, PAD = 10;

export async function workflowView(ctx, id) {
  const head = h("div");
  const graph = h("div", { id: "graph" });
  const jobs = h("div", { id: "workflow-jobs" });
  ctx.render(head, h("section", {}, h("h2", {}, "graph"), graph), h("section", {}, h("h2", {}, "jobs"), jobs));
  ctx.poll(async () => {
    const wf = await call("GET", `/api/v1/workflows/${encodeURIComponent(id)}`);
    const actions = h("div", { class: "actions" });
    if (!["succeeded", "failed", "cancelled"].includes(wf.status)) {
      const b = h("button", { type: "button", id: "workflow-cancel" }, "Cancel");
      b.addEventListener("click", async () => { try { await call("DELETE", `/api/v1/workflows/${encodeURIComponent(id)}`); } catch (e) { showError(e); } });
      actions.append(b);
    }
    const c = wf.counts;
    head.replaceChildren(h("h1", {}, wf.name, " ", status(wf.status)),
      kv([["id", wf.id], ["namespace", wf.namespace], ["jobs", `${c.blocked} blocked, ${c.active} active, ${c.succeeded} succeeded, ${c.failed} failed, ${c.cancelled} cancelled`],
        ["created", when(wf.created_at)]]), actions);
    graph.replaceChildren(drawGraph(wf.jobs));
    jobs.replaceChildren(table(["step", "status", "after", "why"], wf.jobs.map((j) =>
      h("tr", { "data-step": j.name }, h("td", {}, h("a", { href: `#/jobs/${encodeURIComponent(j.id)}` }, j.name)),
        h("td", {}, status(j.status)), h("td", {}, j.after.join(", ")), h("td", {}, j.reason || "")))));
  });
}

// depths is each step's column: 0 for a step after none, else one past the deepest it comes after.
function depths(jobs) {
  const after = Object.fromEntries(jobs.map((j) => [j.name, j.after]));
  const out = {};
  const depth = (name, seen) => {
    if (name in out) return out[name];
    let d = 0;
    if (seen <= jobs.length) for (const a of after[name] || []) d = Math.max(d, depth(a, seen + 1) + 1);
    return (out[name] = d);
  };
  jobs.forEach((j) => depth(j.name, 0));
  return out;
}

// drawGraph lays the steps out in columns by depth, an arrow from each step to those after it.
export function drawGraph(jobs) {
  const depth = depths(jobs);
  const rows = {};
  const at = {};
  for (const j of jobs) {
    const d = depth[j.name];
    rows[d] = (rows[d] || 0) + 1;
    at[j.name] = { x: PAD + d * (BOX_W + GAP_X), y: PAD + (rows[d] - 1) * (BOX_H + GAP_Y) };
  }
  const width = PAD * 2 + (Math.max(0, ...Object.values(depth)) + 1) * (BOX_W + GAP_X) - GAP_X;
  const height = PAD * 2 + Math.max(1, ...Object.values(rows)) * (BOX_H + GAP_Y) - GAP_Y;
  const svg = s("svg", { class: "graph", viewBox: `0 0 ${width} ${height}`, role: "group", "aria-label": "The workflow's jobs and what each comes after" });
  svg.append(s("defs", {}, s("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto" },
    s("path", { d: "M0,0 L10,5 L0,10 z", class: "arrowhead" }))));
  for (const j of jobs) {
    for (const a of j.after) {
      const from = at[a], to = at[j.name];
      if (!from) continue;
      const x1 = from.x + BOX_W, y1 = from.y + BOX_H / 2, x2 = to.x, y2 = to.y + BOX_H / 2, mid = (x1 + x2) / 2;
      svg.append(s("path", { class: "edge", d: `M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2},${y2}`, "marker-end": "url(#arrow)", "data-from": a, "data-to": j.name }));
    }
  }
  for (const j of jobs) {
    const p = at[j.name];
    const link = s("a", { href: `#/jobs/${encodeURIComponent(j.id)}` },
      s("rect", { class: `node status-${j.status}`, x: p.x, y: p.y, width: BOX_W, height: BOX_H, rx: 6 }),
      s("text", { x: p.x + 8, y: p.y + 17, class: "name" }, j.name),
      s("text", { x: p.x + 8, y: p.y + 32, class: "state" }, j.status),
      s("title", {}, j.reason ? `${j.name}: ${j.status} — ${j.reason}` : `${j.name}: ${j.status}`));
    svg.append(s("g", { "data-step": j.name, "data-status": j.status }, link));
  }
  return svg;
}

// family is a job's place in its array or workflow, and an array's children: kv rows and a
// section to show under the job.
export async function family(j) {
  const rows = [];
  if (j.parent) {
    const page = j.parent.startsWith("wf-") ? `#/workflows/${encodeURIComponent(j.parent)}` : `#/jobs/${encodeURIComponent(j.parent)}`;
    rows.push([j.step ? "workflow" : "array", h("a", { href: page, id: "parent-link" }, j.step ? `${j.parent} (step ${j.step})` : `${j.parent} (child ${j.array_index})`)]);
  }
  if ((j.waiting_on || []).length) rows.push(["waits for", j.waiting_on.map((id, i) => [i ? ", " : "", h("a", { href: `#/jobs/${encodeURIComponent(id)}` }, id)])]);
  if (!j.array) return { rows, children: null };
  const st = j.array_status || {};
  rows.push(["array", `${j.array.size} children, ${j.array.parallelism || j.array.size} at once: ${st.blocked} blocked, ${st.active} active, ${st.succeeded} succeeded, ${st.failed} failed, ${st.cancelled} cancelled`]);
  const page = await call("GET", "/api/v1/jobs", { query: { parent: j.id, limit: 100 } });
  const children = table(["child", "status", "why pending"], page.items.map((c) =>
    h("tr", { "data-child": c.array_index }, h("td", {}, h("a", { href: `#/jobs/${encodeURIComponent(c.id)}` }, c.name || c.id)),
      h("td", {}, status(c.status)), h("td", {}, c.pending_reason || ""))));
  return { rows, children };
}
