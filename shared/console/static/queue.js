// Each region's queue: its counts, its flavors' resources with what the active jobs hold of them
// and the tenants' shares, and, per capped instance type, the spot gate's observed price over
// time against the caps of the queued jobs.
import { call } from "./api.js";
import { h, table, kv } from "./dom.js";
import { priceChart } from "./chart.js";

export async function queueView(ctx, region) {
  const body = h("div", { id: "queues" });
  ctx.render(h("h1", {}, region ? `Queue: ${region}` : "Queues"), body);
  ctx.poll(async () => {
    const st = await call("GET", "/api/v1/queue/stats");
    const regions = st.regions.filter((r) => !region || r.region === region);
    if (region && !regions.length) {
      body.replaceChildren(h("p", {}, `No region ${region} here.`));
      return;
    }
    const held = st.held ? [h("p", { class: "held" }, "Your tenant is held by the operator: none of its jobs is dispatched; each keeps its place.")] : [];
    body.replaceChildren(...held, ...regions.map((r) => h("section", { class: "region", "data-region": r.region },
      h("h2", {}, h("a", { href: `#/queue/${encodeURIComponent(r.region)}` }, r.region)),
      kv([["state", regionState(r.reach)], ["jobs by status", Object.entries(r.counts).map(([k, v]) => `${k} ${v}`).join(", ") || "none"],
        ["held by their spot cap", r.gated], ["pods in use", `${r.capacity_in_use}`]]),
      flavorTable(r.flavors || []),
      table(["tenant", "jobs", "GPUs", "share"], (r.tenants || []).map((t) => h("tr", {},
        h("td", {}, t.tenant), h("td", {}, t.use.jobs), h("td", {}, t.use.gpus),
        h("td", {}, t.share.jobs || t.share.gpus ? `${t.share.jobs} jobs, ${t.share.gpus} GPUs` : "none")))),
      (r.spot_prices || []).map((sp) => h("div", { class: "spot" },
        h("h2", {}, `Spot price of ${sp.instance_type}`), priceChart(sp))))));
  }, 5000);
}

// regionState says whether a region admits, and why not: the operator's cordon or drain, its
// cluster out of reach (lost past TIDEGATE_REGION_LOST_AFTER), or fenced attempts being cleared.
function regionState(reach) {
  if (!reach) return "admitting";
  switch (reach.state) {
    case "unreachable":
    case "lost":
      return `${reach.state}: not reached for ${Math.round(reach.unreachable_seconds)} s`;
    case "clearing":
      return `clearing ${reach.fenced_attempts} fenced attempts`;
    default:
      return reach.state;
  }
}

// flavorTable is a region's flavors, a row a resource and tenant: the flavor's capacity and use,
// and the tenant's use, nominal quota, borrowed and lent amounts.
function flavorTable(flavors) {
  const rows = [];
  for (const f of flavors) {
    for (const res of Object.keys(f.capacity).sort()) {
      const tenants = f.tenants.length ? f.tenants : [null];
      for (const t of tenants) {
        rows.push(h("tr", { "data-flavor": f.name, "data-resource": res },
          h("td", {}, f.name), h("td", {}, res), h("td", {}, f.capacity[res]), h("td", {}, f.in_use[res]),
          h("td", {}, t ? t.tenant : ""), h("td", {}, t ? t.in_use[res] : ""), h("td", {}, t ? t.nominal[res] : ""),
          h("td", {}, t ? t.borrowed[res] : ""), h("td", {}, t ? t.lent[res] : "")));
      }
    }
  }
  return table(["flavor", "resource", "capacity", "in use", "tenant", "tenant's", "nominal", "borrowed", "lent"], rows);
}
