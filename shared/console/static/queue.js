// Each region's queue: its counts and, per capped instance type, the spot gate's observed price
// over time against the caps of the queued jobs.
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
    body.replaceChildren(...regions.map((r) => h("section", { class: "region", "data-region": r.region },
      h("h2", {}, h("a", { href: `#/queue/${encodeURIComponent(r.region)}` }, r.region)),
      kv([["jobs by status", Object.entries(r.counts).map(([k, v]) => `${k} ${v}`).join(", ") || "none"],
        ["held by their spot cap", r.gated], ["slots in use", `${r.capacity_in_use} of ${r.capacity_limit}`]]),
      table(["tenant", "jobs", "GPUs", "share"], (r.tenants || []).map((t) => h("tr", {},
        h("td", {}, t.tenant), h("td", {}, t.use.jobs), h("td", {}, t.use.gpus),
        h("td", {}, t.share.jobs || t.share.gpus ? `${t.share.jobs} jobs, ${t.share.gpus} GPUs` : "none")))),
      (r.spot_prices || []).map((sp) => h("div", { class: "spot" },
        h("h2", {}, `Spot price of ${sp.instance_type}`), priceChart(sp))))));
  }, 5000);
}
