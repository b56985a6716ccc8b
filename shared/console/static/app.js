// The console: a hash router over views of the API. Each view renders into main and may poll;
// leaving it stops its polling.
import { call, key } from "./api.js";
import { showError } from "./errors.js";
import { h } from "./dom.js";
import { jobsView, submitView } from "./jobs.js";
import { jobView } from "./job.js";
import { queueView } from "./queue.js";
import { costsView } from "./costs.js";
import { auditView } from "./audit.js";
import { appsView, appView } from "./apps.js";
import { webhooksView, webhookView } from "./webhooks.js";
import { workflowView } from "./workflows.js";

const main = document.getElementById("main");
let timers = [];
let generation = 0;

// ctx is what a view gets: where to render, and a poll that stops when the view is left.
function context() {
  const mine = generation;
  return {
    live: () => mine === generation,
    poll(fn, ms = 2000) {
      const tick = async () => {
        if (mine !== generation) return;
        try { await fn(); } catch (e) { showError(e); }
        if (mine === generation) timers.push(setTimeout(tick, ms));
      };
      tick();
    },
    render(...nodes) { if (mine === generation) main.replaceChildren(...nodes); },
  };
}

const routes = [
  [/^#\/jobs\/new$/, submitView],
  [/^#\/jobs\/([^/]+)$/, jobView],
  [/^#\/jobs$/, jobsView],
  [/^#\/workflows\/([^/]+)$/, workflowView],
  [/^#\/queue(?:\/([^/]+))?$/, queueView],
  [/^#\/apps\/([^/]+)$/, appView],
  [/^#\/apps$/, appsView],
  [/^#\/webhooks\/([^/]+)$/, webhookView],
  [/^#\/webhooks$/, webhooksView],
  [/^#\/costs$/, costsView],
  [/^#\/audit$/, auditView],
];

async function route() {
  generation++;
  timers.forEach(clearTimeout);
  timers = [];
  showError(null);
  const signedIn = !!key.get();
  document.getElementById("nav").hidden = !signedIn;
  if (!signedIn) return signIn();
  const hash = location.hash.split("?")[0] || "#/jobs";
  const params = new URLSearchParams(location.hash.split("?")[1] || "");
  markCurrent(hash);
  for (const [re, view] of routes) {
    const m = hash.match(re);
    if (m) {
      const ctx = context();
      try { await view(ctx, ...m.slice(1).map((x) => x && decodeURIComponent(x)), params); } catch (e) { showError(e); }
      return;
    }
  }
  location.hash = "#/jobs";
}

// markCurrent tells the navigation (and a screen reader) which area the page is in.
function markCurrent(hash) {
  for (const a of document.querySelectorAll("#nav a")) {
    const area = a.getAttribute("href");
    if (hash === area || hash.startsWith(`${area}/`)) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
}

function signIn() {
  const input = h("input", { id: "apikey", type: "password", autocomplete: "off", required: true, placeholder: "tg_…" });
  const form = h("form", { class: "signin", id: "signin" },
    h("h1", {}, "Sign in"),
    h("p", { class: "muted" }, "Your API key stays in this tab's session storage and is sent only to this API."),
    h("label", {}, "API key", input), " ", h("button", { type: "submit" }, "Sign in"));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    key.set(input.value.trim());
    try {
      await call("GET", "/api/v1/jobs", { query: { limit: 1 } });
      if (!location.hash || location.hash === "#/") location.hash = "#/jobs"; else route();
    } catch (e) {
      key.clear();
      showError(e);
    }
  });
  main.replaceChildren(form);
  input.focus();
}

// The skip link moves the keyboard's focus past the navigation to the page itself; a plain
// #main link would be taken for a route.
document.getElementById("skip").addEventListener("click", (ev) => { ev.preventDefault(); main.focus(); });
document.getElementById("signout").addEventListener("click", () => { key.clear(); location.hash = "#/"; route(); });
window.addEventListener("hashchange", route);
route();
