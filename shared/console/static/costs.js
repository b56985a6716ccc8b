// Costs: what the tenant's jobs that ended cost, as each was estimated at its end: by day over
// the last two weeks as a chart, and by the value of a label the user chooses as a table. The
// operator's figures are every tenant's: the API chooses.
import { call } from "./api.js";
import { h, table, swap } from "./dom.js";
import { dayChart } from "./bars.js";
import { money } from "./words.js";

const days = 14;
const dayMs = 24 * 3600 * 1000;

export async function costsView(ctx, params) {
  // The API's days are UTC dates: the range is the last 14 of them, today's included.
  const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
  const from = new Date(today - (days - 1) * dayMs).toISOString(), to = new Date(today + dayMs).toISOString();
  const key = (params.get("label") || "").trim();
  const byDay = h("div", { id: "cost-days" }), byLabel = h("div", { id: "cost-labels" });
  ctx.render(h("h1", {}, "Costs"),
    h("p", { class: "muted" }, "What your jobs that ended cost: each job's estimate, made when it ended, from the prices of the nodes its pods ran on."),
    h("section", { "aria-labelledby": "days-title" }, h("h2", { id: "days-title" }, `Spend by day, the last ${days} days (UTC)`), byDay),
    h("section", { "aria-labelledby": "labels-title" }, h("h2", { id: "labels-title" }, "Spend by label"), labelForm(key), byLabel));
  ctx.poll(async () => {
    const [d, l] = await Promise.all([
      call("GET", "/api/v1/costs", { query: { group_by: "day", from, to } }),
      key ? call("GET", "/api/v1/costs", { query: { group_by: `label:${key}`, from, to } }) : null,
    ]);
    swap(byDay, dayView(d, today));
    swap(byLabel, l ? labelTable(l, key) : h("p", { class: "muted" }, "Choose a label key to see the spend of each of its values."));
  }, 30000);
}

// dayView is the chart of every day of the range, days without an ended job at zero, the total
// above it and the figures in a table under it.
function dayView(answer, today) {
  const cur = answer.currency;
  const found = Object.fromEntries(answer.groups.map((g) => [g.key, g]));
  const series = Array.from({ length: days }, (_, i) => {
    const key = new Date(today - (days - 1 - i) * dayMs).toISOString().slice(0, 10);
    return found[key] || { key, total: 0, jobs: 0, incomplete_jobs: 0 };
  });
  const jobs = series.reduce((n, d) => n + d.jobs, 0), incomplete = series.reduce((n, d) => n + d.incomplete_jobs, 0);
  const summary = `${money(answer.total, cur)} for ${jobs} job${jobs === 1 ? "" : "s"}` +
    (incomplete ? `, ${incomplete} of them with an incomplete estimate or none` : "") + ".";
  return [h("p", { id: "cost-total", "data-total": answer.total }, summary), truncated(answer),
    dayChart(series, (v) => money(v, cur), `Spend by day: ${summary}`),
    h("details", {}, h("summary", { "data-focus": "day-figures" }, "The figures"),
      table(["day", "spend", "jobs", "incomplete estimates"], [...series].reverse().map((g) =>
        h("tr", { "data-day": g.key }, h("td", {}, g.key), h("td", {}, money(g.total, cur)), h("td", {}, g.jobs), h("td", {}, g.incomplete_jobs)))))];
}

function labelForm(key) {
  const input = h("input", { id: "label-key", name: "label", value: key, placeholder: "team", autocomplete: "off", list: "label-keys" });
  const keys = h("datalist", { id: "label-keys" });
  const form = h("form", { class: "inline", id: "label-form" },
    h("label", {}, "label key", input), keys, h("button", { type: "submit" }, "Show"));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    location.hash = `#/costs?${new URLSearchParams({ label: input.value.trim() })}`;
  });
  // The keys of the labels on the tenant's latest jobs, to choose from; the chooser takes any
  // key without them, so a failure to read them is not shown.
  call("GET", "/api/v1/jobs", { query: { limit: 100 } }).then((page) => {
    const seen = [...new Set(page.items.flatMap((j) => Object.keys(j.labels || {})))].sort();
    keys.replaceChildren(...seen.map((k) => h("option", { value: k })));
  }).catch(() => {});
  return form;
}

// labelTable is the spend of each value of the label, the largest first; jobs without it apart.
function labelTable(answer, key) {
  const cur = answer.currency;
  const groups = [...answer.groups].sort((a, b) => b.total - a.total || a.key.localeCompare(b.key));
  return [truncated(answer), table([`${key} =`, "spend", "jobs", "incomplete estimates"], groups.map((g) =>
    h("tr", { "data-key": g.key }, h("td", {}, g.key === "" ? h("span", { class: "muted" }, `(jobs without ${key})`) : g.key),
      h("td", {}, money(g.total, cur)), h("td", {}, g.jobs), h("td", {}, g.incomplete_jobs)))),
    h("p", { class: "muted" }, `${money(answer.total, cur)} in all, the last ${days} days.`)];
}

function truncated(answer) {
  return answer.truncated ? h("p", { class: "problem" }, `These sums stop at the ${answer.jobs_read} newest job records read: there are more.`) : "";
}
