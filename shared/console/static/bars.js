// Bars as inline SVG (the CSP allows no inline style, so no width can be set in CSS from here):
// a flavor's resource as a bar of its capacity filled by each tenant's use, and a column chart
// of amounts by day.
import { s } from "./dom.js";

const suffixes = { n: 1e-9, u: 1e-6, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };

// quantity reads a Kubernetes quantity (4, 500m, 16Gi, 1e3) as a number; NaN when it is none.
export function quantity(q) {
  const m = /^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$/.exec(String(q ?? "").trim());
  if (!m) return NaN;
  const unit = m[2] === "" ? 1 : suffixes[m[2]];
  return unit === undefined ? NaN : Number(m[1]) * unit;
}

// shareBar is one resource of a flavor: the whole bar its capacity, a segment for each tenant's
// use (tenant colours t0…t5 by its place in shares), the rest of the use (other tenants') grey,
// and, when one tenant is shown, a mark at its nominal quota. label says the figures in words.
export function shareBar({ capacity, inUse, shares, nominal, label }) {
  const cap = quantity(capacity);
  const svg = s("svg", { class: "bar", viewBox: "0 0 100 10", preserveAspectRatio: "none", role: "img", "aria-label": label },
    s("title", {}, label), s("rect", { class: "track", x: 0, y: 0, width: 100, height: 10 }));
  if (!(cap > 0)) return svg;
  const pct = (v) => Math.max(0, Math.min(100, (v / cap) * 100));
  let x = 0;
  shares.forEach((sh, i) => {
    const w = pct(quantity(sh.inUse) || 0);
    if (w > 0) svg.append(s("rect", { class: `use t${i % 6}`, x, y: 0, width: Math.min(w, 100 - x), height: 10, "data-tenant": sh.tenant }));
    x += w;
  });
  const rest = pct(quantity(inUse) || 0) - x;
  if (rest > 0.05) svg.append(s("rect", { class: "use others", x, y: 0, width: Math.min(rest, 100 - x), height: 10 }));
  const n = quantity(nominal);
  if (n > 0 && n < cap) svg.append(s("rect", { class: "quota", x: Math.min(pct(n), 99.4), y: 0, width: 0.6, height: 10 }));
  return svg;
}

const W = 640, H = 200, L = 56, R = 8, T = 14, B = 30;

// dayChart is a column chart of days ({key: "2026-11-10", total}), oldest left, scaled to the
// largest; each column says its day and amount in its title.
export function dayChart(days, format, label) {
  const max = Math.max(...days.map((d) => d.total), 0);
  const top = max > 0 ? max : 1;
  const colW = (W - L - R) / Math.max(days.length, 1);
  const y = (v) => T + (1 - v / top) * (H - T - B);
  const svg = s("svg", { class: "chart days", viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": label });
  svg.append(s("line", { class: "axis", x1: L, y1: H - B, x2: W - R, y2: H - B }));
  for (const v of [0, top / 2, top]) svg.append(s("text", { x: 4, y: y(v) + 4 }, max > 0 || v === 0 ? format(v) : ""));
  if (max === 0) svg.append(s("text", { x: L + 10, y: T + 20 }, "Nothing spent on these days."));
  days.forEach((d, i) => {
    const x = L + i * colW + colW * 0.15, w = colW * 0.7;
    const hgt = Math.max((H - T - B) * (d.total / top), d.total > 0 ? 1 : 0);
    const day = new Date(`${d.key}T00:00:00Z`);
    const short = day.toLocaleDateString("en-US", { month: "short", day: "numeric", timeZone: "UTC" });
    svg.append(s("rect", { class: "col", x, y: H - B - hgt, width: w, height: hgt, "data-day": d.key, "data-total": d.total },
      s("title", {}, `${short}: ${format(d.total)}, ${d.jobs} job${d.jobs === 1 ? "" : "s"}`)));
    svg.append(s("text", { x: x + w / 2, y: H - 10, "text-anchor": "middle" }, short));
  });
  return svg;
}
