// Webhooks: the list, and one webhook's delivery log with redelivery.
import { call } from "./api.js";
import { h, when, table, kv } from "./dom.js";
import { showError } from "./errors.js";

export async function webhooksView(ctx) {
  const body = h("div", { id: "webhooks" });
  ctx.render(h("h1", {}, "Webhooks"), body);
  ctx.poll(async () => {
    const l = await call("GET", "/api/v1/webhooks");
    body.replaceChildren(table(["webhook", "url", "events", "state"], (l.items || []).map((w) => h("tr", { "data-webhook": w.id },
      h("td", {}, h("a", { href: `#/webhooks/${encodeURIComponent(w.id)}` }, w.id)), h("td", {}, w.url),
      h("td", {}, (w.events || []).join(", ")), h("td", {}, w.disabled ? `disabled: ${w.disabled_reason || ""}` : "enabled")))));
  }, 5000);
}

export async function webhookView(ctx, id) {
  const base = `/api/v1/webhooks/${encodeURIComponent(id)}`;
  const head = h("div"), deliveries = h("div", { id: "deliveries" });
  ctx.render(head, h("h2", {}, "deliveries"), deliveries);
  ctx.poll(async () => {
    const w = await call("GET", base);
    const test = h("button", { type: "button" }, "Send a test event");
    test.addEventListener("click", async () => { try { await call("POST", `${base}/test`); } catch (e) { showError(e); } });
    head.replaceChildren(h("h1", {}, `Webhook ${w.id}`), kv([["url", w.url], ["events", (w.events || []).join(", ")],
      ["namespace", w.namespace], ["disabled", w.disabled ? w.disabled_reason || "yes" : ""], ["failing since", when(w.failing_since)]]),
      h("div", { class: "actions" }, test));
    const d = await call("GET", `${base}/deliveries`);
    deliveries.replaceChildren(table(["event", "status", "attempts", "last answer", "next attempt", ""], (d.items || []).map((x) => {
      const last = (x.attempts || [])[x.attempts?.length - 1];
      const again = h("button", { type: "button" }, "Redeliver");
      again.addEventListener("click", async () => {
        try { await call("POST", `${base}/deliveries/${encodeURIComponent(x.id)}/redeliver`); } catch (e) { showError(e); }
      });
      return h("tr", { "data-delivery": x.id }, h("td", {}, x.event_type, h("div", { class: "muted" }, x.event_id)), h("td", {}, x.status),
        h("td", {}, x.attempt_count), h("td", {}, last ? (last.status_code ?? last.error ?? "") : ""), h("td", {}, when(x.next_attempt_at)), h("td", {}, again));
    })));
  }, 5000);
}
