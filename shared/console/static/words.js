// What the API's codes mean, in the words a user reads: why a job waits, what was decided about
// it, how a change ended, and money.

// waits says why a queued or blocked job waits (its pending_reason, with pending_resource and
// the spot gate when they are given), as a sentence.
const waits = {
  capacity: () => "Its region's job slots are full.",
  spot_price_above_cap: (j) => `The spot price${gate(j)} is above its cap${cap(j)}.`,
  spot_price_unknown: (j) => `The spot price${gate(j)} is not known yet.`,
  queued_behind_higher_priority: () => "Jobs of higher priority are ahead of it.",
  tenant_long_running_limit: () => "Your tenant already runs as many long-running jobs as it may.",
  tenant_quota_exhausted: (j) => `Your tenant's quota has no room for it${short(j)}.`,
  flavor_full: (j) => `No flavor it may run on has room for it now${short(j)}.`,
  larger_than_every_flavor: (j) => `It asks for more than any flavor of its region has${short(j)}.`,
  no_such_flavor: () => "Its node selector matches none of its region's flavors.",
  name_in_use_by_finishing_job: () => "A job of the same name is still finishing.",
  retry_backoff: () => "It waits out the pause before its next attempt.",
  waiting_for_preempted_jobs: () => "Jobs were evicted to make room for it; the next round admits it.",
  waiting_for_dependencies: () => "It waits for the jobs it comes after to end.",
  waiting_for_array: () => "Its array has not let it in yet.",
  no_allowed_region_open: () => "None of its regions is open at its price cap.",
  no_allowed_region_with_room: () => "None of its regions has room for it.",
  no_allowed_region_admitting: () => "None of its regions admits jobs now.",
  region_cordoned: () => "The operator has cordoned its region: it admits nothing for now.",
  region_draining: () => "The operator is draining its region.",
  region_unreachable: () => "Tidegate cannot reach its region's cluster.",
  region_clearing_fenced_attempts: () => "Its region is back and deletes what lost attempts left before it admits again.",
  tenant_held: () => "The operator holds your tenant's jobs; it keeps its place.",
};

function short(j) {
  return j.pending_resource ? ` (short of ${j.pending_resource})` : "";
}

function cap(j) {
  return j.spot_gate?.max_price != null ? ` of ${j.spot_gate.max_price}` : "";
}

function gate(j) {
  const g = j.spot_gate;
  if (!g) return "";
  const seen = g.observed_price == null ? "" : `, ${g.observed_price} now,`;
  return ` of ${g.instance_type}${seen}`;
}

// waitWords is why job j waits, or "" when it does not say.
export function waitWords(j) {
  if (!j.pending_reason) return "";
  const w = waits[j.pending_reason];
  return w ? w(j) : j.pending_reason.replaceAll("_", " ");
}

// ordinal is 1st, 2nd, 3rd, 4th, … 11th, 12th, 13th, … 21st.
export function ordinal(n) {
  const teen = n % 100 >= 11 && n % 100 <= 13;
  const end = teen ? "th" : ({ 1: "st", 2: "nd", 3: "rd" })[n % 10] || "th";
  return `${n}${end}`;
}

// decisionNames are the decisions' kinds as the timeline names them.
export const decisionNames = {
  admitted: "Admitted",
  waiting: "Waiting",
  room_reclaimed: "Room made for it",
  preempted: "Evicted",
  region_chosen: "Region chosen",
  retry: "Retry",
  region_lost: "Region lost",
  region_drained: "Region drained",
  fenced_attempt_deleted: "Lost attempt deleted",
};

const evictions = {
  reclaimed: "its tenant had borrowed the room it ran on, and the lender needed it back",
  lower_priority: "a job of its own tenant with a higher priority needed the room",
};

// decisionWords is what a decision says beyond its kind: why, where, and what it was decided from.
export function decisionWords(d) {
  const parts = [];
  if (d.kind === "waiting") parts.push(waitWords({ pending_reason: d.reason, pending_resource: d.resource, spot_gate: d.price }));
  else if (d.kind === "preempted") parts.push(evictions[d.reason] || d.reason);
  else if (d.reason) parts.push(d.reason.replaceAll("_", " "));
  if (d.flavor || d.region) parts.push(`on ${[d.flavor, d.region].filter(Boolean).join(" in ")}`);
  const quota = Object.entries(d.quota || {}).sort().map(([r, q]) => `${r} ${q.held} of ${q.nominal}`);
  if (quota.length) parts.push(`your tenant held ${quota.join(", ")} of its quota`);
  if (d.evicted) parts.push(`${d.evicted} job${d.evicted === 1 ? "" : "s"} evicted for it`);
  if (d.rule) parts.push(`by retry ${d.rule}`);
  if (d.attempt > 1) parts.push(`attempt ${d.attempt}`);
  return parts.filter(Boolean).join("; ");
}

// outcome is how a change the audit log recorded ended, from its answer's status.
export function outcome(status) {
  if (!status) return "not known: the API stopped before answering";
  if (status < 300) return `made (${status})`;
  if (status < 500) return `refused (${status})`;
  return `failed (${status})`;
}

// money is an amount in its currency, to the cent, or to two significant digits when it is less
// than a cent (a job of seconds on one node costs a hundredth of a cent).
export function money(amount, currency = "USD") {
  const small = amount > 0 && amount < 0.01;
  return new Intl.NumberFormat("en-US", { style: "currency", currency,
    ...(small ? { maximumSignificantDigits: 2 } : { minimumFractionDigits: 2, maximumFractionDigits: 2 }) }).format(amount);
}
