// Hosted apps: the list with the plan preview, and an app's page with its releases, hosts and logs.
import { call } from "./api.js";
import { h, when, status, table, kv, pre } from "./dom.js";
import { showError } from "./errors.js";

export async function appsView(ctx) {
  const list = h("div", { id: "apps" }), plan = h("div", { id: "plan" });
  ctx.render(h("h1", {}, "Apps"), list, h("h2", {}, "What the next beat will do"), plan);
  ctx.poll(async () => {
    const apps = await call("GET", "/api/v1/apps");
    list.replaceChildren(table(["app", "state", "release", "live release", "host", "updated"], (apps.items || []).map((a) =>
      h("tr", { "data-app": a.name }, h("td", {}, h("a", { href: `#/apps/${encodeURIComponent(a.name)}` }, a.name)),
        h("td", {}, status(a.state)), h("td", {}, a.release), h("td", {}, a.live_release ?? ""), h("td", {}, a.host), h("td", {}, when(a.updated_at))))));
    try { plan.replaceChildren(planTable(await call("GET", "/api/v1/apps/plan"))); } catch (e) { showError(e); }
  }, 4000);
}

function planTable(p, only) {
  const rows = [];
  for (const a of p.items || []) {
    if (only && a.app !== only) continue;
    if (!(a.steps || []).length) rows.push(h("tr", {}, h("td", {}, a.app), h("td", {}, "—"), h("td", {}, ""), h("td", {}, a.note || "")));
    for (const s of a.steps || []) rows.push(h("tr", {}, h("td", {}, a.app), h("td", {}, s.step), h("td", {}, s.host), h("td", {}, s.why)));
  }
  return table(["app", "step", "host", "why"], rows);
}

export async function appView(ctx, name) {
  const base = `/api/v1/apps/${encodeURIComponent(name)}`;
  const head = h("div"), releases = h("div", { id: "releases" }), plan = h("div", { id: "app-plan" }), logs = h("div", { id: "app-logs" });
  ctx.render(head, h("h2", {}, "releases"), releases, h("h2", {}, "plan"), plan, h("h2", {}, "logs"), logs);
  ctx.poll(async () => {
    const a = await call("GET", base);
    const actions = h("div", { class: "actions" });
    const act = (label, path, body) => {
      const b = h("button", { type: "button" }, label);
      b.addEventListener("click", async () => { try { await call("POST", path, { body }); } catch (e) { showError(e); } });
      actions.append(b);
    };
    act(a.state === "stopped" ? "Start" : "Stop", `${base}/${a.state === "stopped" ? "start" : "stop"}`);
    head.replaceChildren(h("h1", {}, a.name, " ", status(a.state)),
      kv([["release", a.release], ["live release", a.live_release], ["host", a.host], ["live host", a.live_host],
        ["why it failed", a.failed_why], ["updated", when(a.updated_at)]]), actions);
    const rs = await call("GET", `${base}/releases`);
    releases.replaceChildren(table(["release", "note", "sha256", "bytes", "created", ""], (rs.items || []).map((r) => {
      const rb = h("button", { type: "button" }, "Roll back to this");
      rb.addEventListener("click", async () => { try { await call("POST", `${base}/rollback`, { body: { release: r.release } }); } catch (e) { showError(e); } });
      return h("tr", { "data-release": r.release }, h("td", {}, r.release), h("td", {}, r.note || ""), h("td", {}, h("code", {}, (r.sha256 || "").slice(0, 12))),
        h("td", {}, r.bytes), h("td", {}, when(r.created_at)), h("td", {}, r.release === a.live_release ? "live" : rb));
    })));
    try { plan.replaceChildren(planTable(await call("GET", "/api/v1/apps/plan"), name)); } catch (e) { showError(e); }
    try {
      const l = await call("GET", `${base}/logs`, { query: { lines: 50 } });
      logs.replaceChildren(h("p", { class: "muted" }, l.host ? `host ${l.host}, from ${l.from}` : "No host has lines yet."), pre((l.lines || []).join("\n")));
    } catch (e) { showError(e); }
  }, 4000);
}
