import { h } from "../dom.ts";
import type { Handoff, Session } from "../types.ts";

/** A small label: what a session is doing now. */
export function badge(text: string, kind: string): HTMLElement {
  return h("span", { class: `badge ${kind}` }, text);
}

/** "running" (else "idle" while it can still run), the handoff's state and platform, "ended": whichever apply. */
export function stateBadges(s: Session): HTMLElement {
  return h(
    "span",
    { class: "badges" },
    s.running ? badge("running", "live") : s.ended_at ? null : badge("idle", "muted"),
    s.handoff ? handoffBadge(s.handoff) : null,
    s.ended_at ? badge(`ended${s.end_reason ? `: ${s.end_reason.replace(/_/g, " ")}` : ""}`, "muted") : null,
  );
}

export function handoffBadge(hd: Handoff): HTMLElement {
  const kind = hd.state === "completed" ? "ok" : hd.state === "failed" ? "bad" : "live";
  return badge(`handoff ${hd.state} → ${hd.platform}`, kind);
}
