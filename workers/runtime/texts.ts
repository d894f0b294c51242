import type { TurnOutcome } from "../agent/index.ts";

/**
 * What users see, the same at the edge and on a relay gateway. Replies are Markdown; the
 * platform renders them.
 */

/** Shown for a turn stopped before it said anything. */
export const STOPPED_TEXT = "⏹ Stopped.";

/** Shown for a turn that ended with no text at all. */
export const EMPTY_TEXT = "(no reply)";

/** Stored (and shown) when a turn could not be finished after the runtime restarted. */
export const RESTART_FAILURE = "The agent restarted while answering and could not finish this reply. Your message is kept; send it again to retry.";

/** Sent as a new message when the final reply could not be delivered where it streamed. */
export const UNDELIVERED_NOTE = "⚠️ The reply above could not be finished in place, so here it is in full:";

/** The text of a failed turn: what was said before the failure, then why. */
export function failureText(outcome: TurnOutcome): string {
  const why = outcome.error?.message ?? "something went wrong";
  return outcome.text ? `${outcome.text}\n\n⚠️ ${why}` : `⚠️ ${why}`;
}

/** The final reply of a turn, from its outcome and the text streamed (which wins when longer). */
export function replyText(outcome: TurnOutcome, streamed = ""): string {
  const text = streamed.length > outcome.text.length ? streamed : outcome.text;
  if (outcome.error) return failureText({ ...outcome, text });
  if (text.trim() === "") return outcome.finishReason === "interrupted" ? STOPPED_TEXT : EMPTY_TEXT;
  return text;
}

/** What a user over `DAILY_TOKEN_BUDGET` is told (once a day): how much, and when it resets. */
export function budgetText(used: number, budget: number, now: number): string {
  const midnight = Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), new Date(now).getUTCDate() + 1);
  const mins = Math.max(1, Math.ceil((midnight - now) / 60_000));
  const left = mins >= 60 ? `${Math.floor(mins / 60)} h ${mins % 60} min` : `${mins} min`;
  return `You have used today's allowance of ${budget.toLocaleString("en-US")} tokens (${used.toLocaleString("en-US")} so far), so this message was not answered. It resets at 00:00 UTC, in ${left}.`;
}
