import { ApiFailure, json, sessionPath } from "../api.ts";
import { h, notice, replace, time } from "../dom.ts";
import type { Handoff, HandoffState, Person, Platform } from "../types.ts";
import { errorMessage } from "../../../log/error.ts";

/** Longest one watch request waits for a change (the API allows 30 s). */
const WAIT_S = 25;
const FINAL: ReadonlySet<HandoffState> = new Set(["completed", "failed"]);

/** Only http(s) links are rendered (a stored `javascript:` URL must never become a link). */
function isWebUrl(url: string): boolean {
  return /^https?:\/\//i.test(url);
}

/** Where a handoff to `p` would land, shown before it is queued. */
function destinationLine(p: Platform | undefined): string {
  const home = p?.home_channel;
  if (!p || !home) return "No home channel: an admin sends /sethome in the chat sessions should go to.";
  if (home.refused) return `Refused: ${home.refused}`;
  return `→ ${home.handoff_to ?? `${p.name} chat ${home.chat_id}`}`;
}

function stateView(hd: Handoff): HTMLElement {
  const dest = hd.destination;
  const where = dest ? `chat ${dest.chat_id}${dest.thread_id ? `, thread ${dest.thread_id}` : ""}` : null;
  const steps: Array<[string, number | null, boolean]> = [
    ["pending", hd.requested_at, true],
    ["running", hd.claimed_at, hd.claimed_at !== null || hd.state === "running"],
    [hd.state === "failed" ? "failed" : "completed", hd.finished_at, FINAL.has(hd.state)],
  ];
  return h(
    "div",
    { class: `handoff-state ${hd.state}`, "data-state": hd.state },
    h(
      "ol",
      { class: "steps" },
      ...steps.map(([name, at, reached]) =>
        h("li", { class: reached ? `reached ${name}` : "" }, h("span", {}, name), " ", h("time", {}, reached ? time(at) : "—")),
      ),
    ),
    h("p", {}, `Handoff to ${hd.platform}: `, h("strong", {}, hd.state), hd.state === "completed" && where ? ` · now in ${where}` : null),
    dest?.url && isWebUrl(dest.url)
      ? h("p", {}, h("a", { href: dest.url, target: "_blank", rel: "noopener noreferrer", class: "destination" }, `Open it in ${hd.platform}`))
      : null,
    hd.error ? notice(hd.error, "error") : null,
  );
}

/**
 * Hand the session to a platform and watch it: pending → running → completed or failed,
 * with each step's time and, once it lands, where the session now lives. Watching is the
 * API's long-poll (`GET …/handoff?wait=&state=`), one request at a time.
 */
export function handoffView(sessionId: string, initial: Handoff | null, platforms: Platform[], people: Person[], signal: AbortSignal): HTMLElement {
  const usable = platforms.filter((p) => p.enabled && !p.relay);
  const select = h(
    "select",
    { id: "handoff-platform" },
    ...usable.map((p) => h("option", { value: p.name }, `${p.name}${p.home_channel ? "" : " (no home channel)"}`)),
  );
  // Where on that platform: its home channel, or the DM of a person with an account there.
  const target = h("select", { id: "handoff-target", "aria-label": "Where on that platform" });
  const go = h("button", { type: "submit", disabled: usable.length === 0 }, "Hand off");
  const to = h("p", { class: "muted", id: "handoff-destination" }, destinationLine(usable[0]));
  const targets = () => {
    const here = people.flatMap((p) => p.accounts.filter((a) => a.platform === select.value).map((a) => ({ person: p.id, user: a.user_id })));
    replace(target, h("option", { value: "" }, "home channel"), ...here.map((x) => h("option", { value: x.person }, `DM of ${x.user} (${x.person})`)));
  };
  const describe = () => {
    const dm = people.find((p) => p.id === target.value)?.accounts.find((a) => a.platform === select.value);
    to.textContent = dm ? `→ ${select.value} DM of user ${dm.user_id}` : destinationLine(usable.find((p) => p.name === select.value));
  };
  targets();
  select.addEventListener("change", () => (targets(), describe()));
  target.addEventListener("change", describe);
  const state = h("div", { "aria-live": "polite", id: "handoff-status" });
  let watching = false;

  const show = (hd: Handoff | null) => {
    replace(state, hd ? stateView(hd) : null);
    go.disabled = usable.length === 0 || (hd !== null && !FINAL.has(hd.state));
  };

  const watch = async (from: Handoff) => {
    if (watching) return;
    watching = true;
    let hd: Handoff | null = from;
    try {
      while (hd && !FINAL.has(hd.state) && !signal.aborted) {
        hd = (await json<{ handoff: Handoff | null }>("GET", sessionPath(sessionId, `/handoff?wait=${WAIT_S}&state=${hd.state}`), undefined, signal)).handoff;
        show(hd);
      }
    } catch (err) {
      if (!signal.aborted) state.append(notice(`Lost track of the handoff: ${errorMessage(err)}`, "error"));
    } finally {
      watching = false;
    }
  };

  const form = h(
    "form",
    { class: "handoff", "aria-label": "Hand off" },
    h("label", { for: "handoff-platform" }, "Hand this session to"),
    select,
    target,
    go,
    usable.length > 0 ? to : null,
    usable.length === 0 ? h("p", { class: "muted" }, "No platform served by this Worker is configured (see Platforms).") : null,
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    go.disabled = true;
    json("POST", sessionPath(sessionId, "/handoff"), { platform: select.value, ...(target.value ? { person: target.value } : {}) }, signal)
      // The request's answer has no times: the handoff itself has them.
      .then(() => json<{ handoff: Handoff | null }>("GET", sessionPath(sessionId, "/handoff"), undefined, signal))
      .then(({ handoff }) => {
        show(handoff);
        return handoff ? watch(handoff) : undefined;
      })
      .catch((err: unknown) => {
        go.disabled = false;
        const text = err instanceof ApiFailure ? err.message : String(err);
        replace(state, notice(`Handoff refused: ${text}`, "error"));
      });
  });
  show(initial);
  if (initial && !FINAL.has(initial.state)) void watch(initial);
  return h("section", { class: "panel", "aria-labelledby": "handoff-title" }, h("h2", { id: "handoff-title" }, "Handoff"), form, state);
}
