// The spot gate's observed price over time against the queued jobs' caps, as inline SVG.
import { s } from "./dom.js";

const W = 640, H = 220, L = 52, R = 12, T = 12, B = 28;

export function priceChart(series) {
  const points = series.points.map((p) => ({ t: Date.parse(p.at), v: p.price }));
  const caps = series.caps.map((c) => c.max_price);
  const values = points.map((p) => p.v).concat(caps);
  const lo = Math.min(...values, Infinity), hi = Math.max(...values, -Infinity);
  const span = hi > lo ? hi - lo : Math.max(hi, 0.01);
  const vmin = Math.max(0, lo - span * 0.15), vmax = hi + span * 0.15;
  const now = Date.now();
  const t0 = points.length ? Math.min(points[0].t, now - 60000) : now - 3600000;
  const t1 = Math.max(now, points.length ? points[points.length - 1].t : now);
  const x = (t) => L + ((t - t0) / Math.max(t1 - t0, 1)) * (W - L - R);
  const y = (v) => T + (1 - (v - vmin) / Math.max(vmax - vmin, 1e-9)) * (H - T - B);
  const svg = s("svg", { class: "chart", viewBox: `0 0 ${W} ${H}`, role: "img",
    "aria-label": `Spot price of ${series.instance_type} against the caps`, "data-instance-type": series.instance_type });
  svg.append(s("line", { class: "axis", x1: L, y1: H - B, x2: W - R, y2: H - B }));
  svg.append(s("line", { class: "axis", x1: L, y1: T, x2: L, y2: H - B }));
  for (const v of [vmin, (vmin + vmax) / 2, vmax]) {
    svg.append(s("text", { x: 4, y: y(v) + 4 }, v.toFixed(3)));
  }
  svg.append(s("text", { x: L, y: H - 8 }, new Date(t0).toLocaleTimeString()));
  svg.append(s("text", { x: W - R - 60, y: H - 8 }, new Date(t1).toLocaleTimeString()));
  for (const c of series.caps) {
    svg.append(s("line", { class: "cap", x1: L, x2: W - R, y1: y(c.max_price), y2: y(c.max_price), "data-cap": c.max_price }));
    svg.append(s("text", { x: W - R - 150, y: y(c.max_price) - 4 }, `cap ${c.max_price} · ${c.jobs} job${c.jobs === 1 ? "" : "s"}`));
  }
  if (points.length) {
    // A step line: a price holds until the next point, and the last one until now.
    let d = `M${x(points[0].t)},${y(points[0].v)}`;
    for (let i = 1; i < points.length; i++) d += ` H${x(points[i].t)} V${y(points[i].v)}`;
    d += ` H${x(t1)}`;
    svg.append(s("path", { class: "price", d }));
    for (const p of points) svg.append(s("circle", { class: "dot", cx: x(p.t), cy: y(p.v), r: 2.5 }, s("title", {}, `${p.v} at ${new Date(p.t).toLocaleString()}`)));
  } else {
    svg.append(s("text", { x: L + 10, y: T + 20 }, "No price observed yet."));
  }
  return svg;
}
