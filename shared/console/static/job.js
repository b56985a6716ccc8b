// A job's page: what it is and why it waits, its status history and Tidegate's decisions about it
// on one timeline, where it runs, what it cost, its earlier attempts, and its pods, events and
// logs while it has them. Cancel and retry.
import { call } from "./api.js";
import { h, when, status, kv, pre, swap, table } from "./dom.js";
import { showError } from "./errors.js";
import { family } from "./workflows.js";
import { waitWords, ordinal, decisionNames, decisionWords } from "./words.js";
import { placementView, costLine, costView, attemptsView } from "./placement.js";

const ended = (st) => ["succeeded", "failed", "cancelled"].includes(st);

const sections = [["history", "Timeline"], ["placement", "Where it runs"], ["cost", "Cost"], ["attempts", "Earlier attempts"],
  ["pods", "Pods"], ["events", "Events"], ["logs", "Logs"]];

export async function jobView(ctx, id) {
  const head = h("div");
  const parts = Object.fromEntries(sections.map(([k]) => [k, h("div")]));
  ctx.render(head, ...sections.map(([k, title]) => h("section", { id: k, "aria-labelledby": `${k}-title` },
    h("h2", { id: `${k}-title` }, title), parts[k])));
  let last = "";
  const base = `/api/v1/jobs/${encodeURIComponent(id)}`;
  ctx.poll(async () => {
    const j = await call("GET", base);
    const [fam, trail] = await Promise.all([family(j), call("GET", `${base}/decisions`)]);
    renderHead(head, j, fam);
    swap(parts.history, timeline(j.status_history || [], trail.items || []));
    swap(parts.placement, placementView(j.placement));
    swap(parts.cost, costView(ended(j.status) ? j.cost : null));
    swap(parts.attempts, attemptsView(j.attempts));
    // The live views read the cluster: only while the job has objects there, and once after.
    const live = ["pending", "running", "dispatching"].includes(j.status);
    if (live || last !== j.status) await liveViews(parts, base, j);
    last = j.status;
  });
}

function renderHead(head, j, fam) {
  swap(head,
    h("h1", {}, j.name || j.id, " ", status(j.status)),
    waiting(j),
    kv([["id", j.id], ["namespace", j.namespace], ["region", j.region || (j.regions || []).join(", ")], ["priority", j.priority],
      ["demand", Object.entries(j.demand || {}).sort().map(([k, v]) => `${k} ${v}`).join(", ")],
      ["flavor", j.flavor || Object.entries(j.node_selector || {}).map(([k, v]) => `${k}=${v}`).join(", ") || "chosen when it is admitted"],
      ["cost", costLine(j, ended(j.status))],
      ["attempt", j.attempt ? `${ordinal(j.attempt)} attempt` : ""],
      ["evicted", j.preemptions ? `${j.preemptions} time${j.preemptions === 1 ? "" : "s"}, each queued again in its place` : ""],
      ["spot gate", j.spot_gate ? `${j.spot_gate.instance_type}: ${j.spot_gate.observed_price ?? "no price seen yet"} now, cap ${j.spot_gate.max_price}` : ""],
      ["dispatch error", j.dispatch_error], ["created", when(j.created_at)], ...fam.rows]),
    actions(j),
    fam.children ? h("section", { id: "children" }, h("h2", {}, "Children"), fam.children) : "");
}

// waiting says, while the job is queued or blocked, why it waits and its place in line.
function waiting(j) {
  if (!["queued", "blocked"].includes(j.status) && j.pending_reason !== "region_unreachable") return "";
  const why = waitWords(j) || "It waits for its turn.";
  const place = j.queue_position ? ` It is ${ordinal(j.queue_position)} in line in ${j.region}.` : "";
  return h("p", { id: "waiting", class: "waiting", "data-reason": j.pending_reason || "" }, h("strong", {}, "Waiting: "), why, place);
}

function actions(j) {
  const out = h("div", { class: "actions" });
  const act = (label, method, path, then) => {
    const b = h("button", { type: "button", id: `job-${label.toLowerCase()}` }, label);
    b.addEventListener("click", async () => {
      try { const r = await call(method, path); if (then) then(r); } catch (e) { showError(e); }
    });
    out.append(b);
  };
  const base = `/api/v1/jobs/${encodeURIComponent(j.id)}`;
  if (!ended(j.status)) act("Cancel", "DELETE", base);
  else act("Retry", "POST", `${base}/retry`, (r) => { if (r?.job?.id) location.hash = `#/jobs/${r.job.id}`; });
  return out;
}

// timeline is the job's status history and the decisions about it, oldest first, one list: a
// status change as a filled dot, a decision as a hollow one with what it was decided from.
function timeline(history, decisions) {
  const entries = [
    ...history.map((t, i) => ({ at: Date.parse(t.at), i, el: h("li", { class: "transition", "data-status": t.status },
      status(t.status), " ", h("span", { class: "muted" }, when(t.at)), t.reason ? ` — ${t.reason}` : "",
      t.attempt > 1 ? h("span", { class: "muted" }, ` (attempt ${t.attempt})`) : "") })),
    ...decisions.map((d, i) => ({ at: Date.parse(d.at), i: -1 - i, el: h("li", { class: "decision", "data-decision": d.kind },
      h("strong", {}, decisionNames[d.kind] || d.kind), " ", h("span", { class: "muted" }, when(d.at)),
      decisionWords(d) ? ` — ${decisionWords(d)}` : "") })),
  ];
  // Decisions come newest first; at the same instant a decision goes before the move it made.
  entries.sort((a, b) => a.at - b.at || a.i - b.i);
  return h("ol", { class: "timeline", id: "timeline" }, entries.map((e) => e.el));
}

async function liveViews(parts, base, j) {
  const soft = async (path) => { try { return await call("GET", path); } catch (e) { showError(e); return null; } };
  const [pods, events, logs] = await Promise.all([soft(`${base}/pods`), soft(`${base}/events`), soft(`${base}/logs`)]);
  if (pods) swap(parts.pods, table(["pod", "phase", "node", "started"], (pods.items || []).map((p) =>
    h("tr", {}, h("td", {}, p.name), h("td", {}, p.phase), h("td", {}, p.node_name || p.node || ""), h("td", {}, when(p.start_time || p.started_at))))));
  if (events) swap(parts.events, table(["last seen", "type", "reason", "object", "message"], (events.items || []).map((e) =>
    h("tr", {}, h("td", {}, when(e.last_seen)), h("td", {}, e.type), h("td", {}, e.reason), h("td", {}, e.object || e.involved_object || ""), h("td", {}, e.message)))));
  if (logs) swap(parts.logs, h("p", { class: "muted" }, `from ${logs.from}${logs.pod ? `, pod ${logs.pod}` : ""}`), pre((logs.lines || []).join("\n")));
  else if (j.log_tail) swap(parts.logs, pre(j.log_tail.join("\n")));
}
