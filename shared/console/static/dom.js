// Small helpers to build the page with the DOM API: text is always text, never markup.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

const svgNS = "http://www.w3.org/2000/svg";

export function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(svgNS, tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

function setAttrs(el, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "style") throw new Error("no inline styles: the console's CSP refuses them");
    else el.setAttribute(k, v === true ? "" : String(v));
  }
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

export function when(t) {
  if (!t) return "";
  const d = new Date(t);
  return isNaN(d) ? String(t) : d.toLocaleString();
}

export function status(st) {
  return h("span", { class: `status status-${st}`, "data-status": st }, st);
}

export function table(headers, rows) {
  return h("table", {}, h("thead", {}, h("tr", {}, headers.map((x) => h("th", { scope: "col" }, x)))),
    h("tbody", {}, rows.length ? rows : h("tr", {}, h("td", { colspan: headers.length, class: "muted" }, "None."))));
}

export function kv(pairs) {
  return h("dl", { class: "kv" }, pairs.filter(([, v]) => v !== undefined && v !== null && v !== "")
    .map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
}

// pre is a block of text as it is; it scrolls when long, so it takes the keyboard's focus too.
export function pre(x) {
  return h("pre", { tabindex: 0 }, typeof x === "string" ? x : JSON.stringify(x, null, 2));
}

// swap replaces el's children with nodes, as a poll does every few seconds, and gives the
// keyboard's focus back to the same control if it was inside el: else a user tabbing through a
// list that a poll redraws would be sent back to the top of the page at each poll. A <details>
// the user opened (its <summary> has a data-focus) stays open.
export function swap(el, ...nodes) {
  const active = document.activeElement;
  const sel = active && active !== el && el.contains(active) ? focusKey(active) : "";
  const open = [...el.querySelectorAll("details[open] > summary[data-focus]")].map((x) => x.dataset.focus);
  el.replaceChildren(...nodes.flat(Infinity).filter((n) => n !== undefined && n !== null && n !== false && n !== ""));
  for (const key of open) el.querySelector(`summary[data-focus="${CSS.escape(key)}"]`)?.parentElement.setAttribute("open", "");
  if (sel) el.querySelector(sel)?.focus();
}

function focusKey(el) {
  if (el.id) return `#${CSS.escape(el.id)}`;
  for (const a of ["href", "name", "data-focus"]) {
    const v = el.getAttribute(a);
    if (v) return `${el.tagName.toLowerCase()}[${a}="${CSS.escape(v)}"]`;
  }
  return "";
}
