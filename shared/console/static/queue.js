// Each region: whether it admits, its counts, its flavors' resources as bars of their capacity
// filled by each tenant's use (the caller's own tenant, or every tenant for the operator: the API
// chooses), the figures as a table, and, per capped instance type, the spot gate's observed price
// over time against the caps of the queued jobs.
import { call } from "./api.js";
import { h, table, kv, swap } from "./dom.js";
import { priceChart } from "./chart.js";
import { shareBar, quantity } from "./bars.js";

export async function queueView(ctx, region) {
  const body = h("div", { id: "queues" });
  ctx.render(h("h1", {}, region ? `Region ${region}` : "Regions"), body);
  ctx.poll(async () => {
    const st = await call("GET", "/api/v1/queue/stats");
    const regions = st.regions.filter((r) => !region || r.region === region);
    if (region && !regions.length) {
      swap(body, h("p", {}, `No region ${region} here.`));
      return;
    }
    const held = st.held ? [h("p", { class: "held" }, "Your tenant is held by the operator: none of its jobs is dispatched; each keeps its place.")] : [];
    swap(body, ...held, ...regions.map((r) => h("section", { class: "region", "data-region": r.region },
      h("h2", {}, region ? r.region : h("a", { href: `#/queue/${encodeURIComponent(r.region)}` }, r.region)),
      kv([["state", h("span", { "data-reach-state": r.reach?.state || "admitting" }, regionState(r.reach))],
        ["jobs by status", Object.entries(r.counts).map(([k, v]) => `${k} ${v}`).join(", ") || "none"],
        ["held by their spot cap", r.gated], ["pods in use", `${r.capacity_in_use}`]]),
      h("h3", {}, "Flavors: capacity, use and shares"),
      flavorBars(r.flavors || []),
      figures(r.region, flavorTable(r.flavors || [])),
      h("h3", {}, "Tenants' jobs"),
      table(["tenant", "jobs", "GPUs", "share"], (r.tenants || []).map((t) => h("tr", {},
        h("td", {}, t.tenant), h("td", {}, t.use.jobs), h("td", {}, t.use.gpus),
        h("td", {}, t.share.jobs || t.share.gpus ? `${t.share.jobs} jobs, ${t.share.gpus} GPUs` : "none")))),
      (r.spot_prices || []).map((sp) => h("div", { class: "spot" },
        h("h3", {}, `Spot price of ${sp.instance_type}`), priceChart(sp))))));
  }, 5000);
}

function figures(region, tbl) {
  return h("details", {}, h("summary", { "data-focus": `figures-${region}` }, "The figures"), tbl);
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

// flavorBars is each flavor of a region with a bar per resource: its capacity, each tenant's use
// in the tenant's colour, the rest of its use (other tenants') grey, and the one tenant's nominal
// quota as a mark when one is shown; a legend names the colours.
function flavorBars(flavors) {
  if (!flavors.length) return h("p", { class: "muted" }, "This region has no flavors set.");
  const names = [...new Set(flavors.flatMap((f) => f.tenants.map((t) => t.tenant)))].sort();
  const legend = h("ul", { class: "legend" }, names.map((n, i) => h("li", {}, h("span", { class: `swatch t${i % 6}`, "aria-hidden": "true" }), n)),
    h("li", {}, h("span", { class: "swatch others", "aria-hidden": "true" }), ["in use", "other tenants"][names.length] || "other use"),
    names.length === 1 && hasQuota(flavors) ? h("li", {}, h("span", { class: "swatch quota", "aria-hidden": "true" }), `${names[0]}'s quota`) : "");
  return [legend, flavors.map((f) => h("div", { class: "flavor", "data-flavor": f.name },
    h("h4", {}, f.name, " ", h("span", { class: "muted" }, Object.entries(f.node_labels || {}).map(([k, v]) => `${k}=${v}`).join(", "))),
    h("dl", { class: "bars" }, Object.keys(f.capacity).sort().map((res) => resourceBar(f, res, names))))) ];
}

// hasQuota says whether the one tenant shown has a nominal quota of some flavor's resource.
function hasQuota(flavors) {
  return flavors.some((f) => Object.values(f.tenants[0]?.nominal || {}).some((v) => quantity(v) > 0));
}

function resourceBar(f, res, names) {
  const shares = names.map((n) => {
    const t = f.tenants.find((x) => x.tenant === n);
    return { tenant: n, inUse: t?.in_use[res] || "0", nominal: t?.nominal[res], borrowed: t?.borrowed[res] };
  });
  const yours = shares.map((sh) => sh.tenant + " " + sh.inUse +
    (shares.length === 1 && quantity(sh.nominal) > 0 ? ` of a quota of ${sh.nominal}` : "") +
    (quantity(sh.borrowed) > 0 ? `, ${sh.borrowed} of it borrowed` : ""));
  const words = `${f.in_use[res] || "0"} of ${f.capacity[res]} in use${yours.length ? `; ${yours.join(", ")}` : ""}`;
  return [h("dt", {}, res), h("dd", { "data-resource": res },
    shareBar({ capacity: f.capacity[res], inUse: f.in_use[res], shares, nominal: shares.length === 1 ? shares[0].nominal : "", label: `${res}: ${words}` }),
    h("span", { class: "figures" }, words))];
}
