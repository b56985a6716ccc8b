// Where a job runs and what it cost: its placement's nodes (instance and capacity type, zone, its
// pods on each), the pods not scheduled yet, its cost per node, and its earlier attempts.
import { h, table, when } from "./dom.js";
import { money } from "./words.js";

// placementView is the job's placement (GET /api/v1/jobs/{id}'s placement) as tables.
export function placementView(pl) {
  if (!pl || (!(pl.nodes || []).length && !(pl.unscheduled || []).length && !pl.node_lookup_error)) {
    return h("p", { class: "muted" }, "Not placed yet: none of its pods is on a node.");
  }
  const out = [];
  if (pl.node_lookup_error) out.push(h("p", { class: "problem" }, `Its nodes could not all be read: ${pl.node_lookup_error}`));
  out.push(table(["node", "instance type", "capacity", "zone", "pods"], (pl.nodes || []).map((n) =>
    h("tr", { "data-node": n.name },
      h("td", {}, n.name), h("td", {}, n.lookup_failed ? "not read" : n.instance_type || "unknown"),
      h("td", {}, n.capacity_type || ""), h("td", {}, n.labels?.zone || ""), h("td", {}, podsOn(n.pods || []))))));
  if ((pl.unscheduled || []).length) {
    out.push(h("h3", {}, "Pods not on a node yet"),
      table(["pod", "phase", "why", "since"], pl.unscheduled.map((u) => h("tr", { "data-unscheduled": u.pod },
        h("td", {}, u.pod), h("td", {}, u.phase), h("td", {}, [u.reason, u.message].filter(Boolean).join(": ")), h("td", {}, when(u.since))))));
  }
  return out;
}

// podsOn is a node's pods: how many, and their names when they are few enough to read.
function podsOn(pods) {
  const names = pods.length <= 3 ? `: ${pods.map((p) => p.name).join(", ")}` : "";
  return `${pods.length}${names}`;
}

// costLine is the job's cost for its summary: the estimate once it has ended, else when it will be.
export function costLine(j, ended) {
  if (!ended) return "Estimated when the job ends.";
  const c = j.cost;
  if (!c) return "No estimate: the job ended before costs were kept.";
  const total = h("span", { "data-cost-total": c.total }, money(c.total, c.currency));
  if (c.complete) return total;
  return [total, ` (incomplete: ${(c.reasons || []).join("; ") || "a node's price or type was not known"})`];
}

// costView is the estimate node by node: each node's price an hour, where the price came from,
// and this job's time on it.
export function costView(c) {
  if (!c) return h("p", { class: "muted" }, "Estimated when the job ends, from the prices of the nodes its pods ran on.");
  return table(["node", "instance type", "capacity", "zone", "time on it", "price an hour", "price from", "cost"], (c.nodes || []).map((n) =>
    h("tr", { "data-cost-node": n.name },
      h("td", {}, n.name), h("td", {}, n.instance_type || "unknown"), h("td", {}, n.capacity_type || ""), h("td", {}, n.zone || ""),
      h("td", {}, duration(n.node_seconds)), h("td", {}, n.price_per_hour == null ? "not known" : money(n.price_per_hour, c.currency)),
      h("td", {}, (n.price_source || "").replaceAll("_", " ")), h("td", {}, money(n.cost || 0, c.currency)))));
}

function duration(seconds) {
  const s = Math.round(seconds || 0);
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

// attemptsView is the job's earlier attempts, newest first: how each ended and where it ran.
export function attemptsView(attempts) {
  if (!attempts?.length) return h("p", { class: "muted" }, "None: this is its first attempt.");
  return table(["attempt", "ended", "why", "nodes", "exits"], [...attempts].reverse().map((a) =>
    h("tr", { "data-attempt": a.attempt },
      h("td", {}, a.attempt), h("td", {}, when(a.ended_at)), h("td", {}, (a.reason || "").replaceAll("_", " ")),
      h("td", {}, (a.placement?.nodes || []).map((n) => n.name).join(", ")),
      h("td", {}, (a.exits || []).map((e) => `${e.pod}/${e.container} exit ${e.exit_code}${e.reason ? ` ${e.reason}` : ""}`).join(", ")))));
}
