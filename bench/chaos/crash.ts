/**
 * Scenarios (a), (b), (c): the edge Worker killed with kill -9 mid-turn and mid-final-delivery,
 * and a platform failing the final edit (500, then 429 with retry_after), once with the wait
 * outliving the Worker. After each restart (same port, same --persist-to storage) nothing is
 * nudged: the session objects' own alarms must bring every reply home.
 */
import { sessionByKey, transcript, until, within, type Tally } from "./harness.ts";
import type { Stack } from "./stack.ts";
import { all, checkChat, checkDm, dmKey, freshUser, isCall, sendDm, untilSettledAfterPost } from "./telegram-dm.ts";
import type { SeenCall } from "./view.ts";

export interface CrashOptions {
  rounds: number;
  /** Chats with a turn in flight at each kill. */
  parallel: number;
}

/** How long a reply may take after a restart: the watchdog alarm (30 s) plus a slow start. */
const RECOVERY_MS = 120_000;
/** A held model stream gives up after this (the bench always releases or kills first). */
const HOLD_MS = 180_000;

const held = ["part one "];
const rest = ["and part two"];
const FULL = "part one and part two";

interface HeldCase {
  user: number;
  text: string;
  gate: { release(): void };
  /** Resolves once the chat shows the first words. */
  posted: Promise<void>;
}

/** Posts one DM per chat, each answered by a held stream that first shows "part one ". */
async function heldTurns(s: Stack, tag: string, n: number): Promise<HeldCase[]> {
  const cases = Array.from({ length: n }, (_, i) => {
    const user = freshUser();
    return { user, text: `${tag} case ${i}`, gate: s.llm.hold(held, rest, HOLD_MS), posted: s.telegram.shows(user, held[0]!) };
  });
  for (const c of cases) await sendDm(s.api, c.user, c.text);
  return cases;
}

/**
 * Releases each held stream the moment its first words show: the rest then arrives before
 * the next live edit is due (1.1 s in a DM), so the final delivery is what carries it.
 */
function releaseOnPost(cases: readonly HeldCase[]): Promise<void[]> {
  return all(60_000, "the first words shown", cases.map((c) => c.posted.then(() => c.gate.release())));
}

async function crashAndRestart(s: Stack): Promise<void> {
  await s.worker.crash();
  await within(90_000, s.worker.restart(), "wrangler dev restarting");
}

const finalEdit = (user: number) => (c: SeenCall) => isCall("editMessageText", user)(c) && c.body.text === FULL;

/**
 * (a) kill -9 while the model holds every chat's turn, with a second message of each chat
 * waiting behind it: after the restart each is answered once, in full, in order.
 */
export async function midTurn(s: Stack, o: CrashOptions, tally: Tally): Promise<void> {
  for (let r = 0; r < o.rounds; r++) {
    s.reset();
    const cases = Array.from({ length: o.parallel }, (_, i) => ({ user: freshUser(), texts: [`chaos a ${r}.${i} first`, `chaos a ${r}.${i} second`] }));
    for (const _ of cases) s.llm.hold(["thinking "], ["never"], HOLD_MS);
    for (const c of cases) await sendDm(s.api, c.user, c.texts[0]!);
    await all(60_000, "a: every turn streaming", cases.map((c) => untilSettledAfterPost(s.telegram, c.user)));
    for (const c of cases) await sendDm(s.api, c.user, c.texts[1]!);
    await crashAndRestart(s);
    // The re-run and the next turn take the default answer: the echo of the message.
    await Promise.all(cases.map((c) => checkChat(s.api, s.telegram, tally, c.user, c.texts.map((text) => ({ text, expected: `echo: ${text}` })), RECOVERY_MS)));
  }
}

/** The three moments of (b), one per round in turn. */
const DELIVERY_VARIANTS = ["final edit held, not applied", "final edit applied, its answer lost", "last live edit hanging"] as const;

/**
 * (b) kill -9 while the platform holds the edit that completes the reply: the final
 * delivery's, not yet applied; the same, applied with only its answer lost (the retry meets
 * "message is not modified"); or the last live edit, with the reply stored but the turn
 * not yet ended. Released at once after the first words, the rest arrives before the next
 * live edit is due, so the final delivery carries it; released after a typing refresh, a
 * live edit is due at once and carries it.
 */
export async function midDelivery(s: Stack, o: CrashOptions, tally: Tally): Promise<void> {
  for (let r = 0; r < o.rounds; r++) {
    const variant = DELIVERY_VARIANTS[r % DELIVERY_VARIANTS.length]!;
    s.reset();
    const cases = await heldTurns(s, `chaos b ${r}`, o.parallel);
    const holds = cases.map((c) => s.telegram.hold(finalEdit(c.user), { applied: variant === "final edit applied, its answer lost" }));
    if (variant === "last live edit hanging") {
      await all(60_000, "b: typing after the first words", cases.map((c) => untilSettledAfterPost(s.telegram, c.user)));
      for (const c of cases) c.gate.release();
    } else await releaseOnPost(cases);
    await all(60_000, `b (${variant}): every edit completing the reply at the platform`, holds.map((h) => h.arrived));
    // A live edit may leave before the model's last event: kill once the reply is stored
    // (the final delivery's edit always comes after that).
    await all(60_000, "b: the replies stored", cases.map((c) => untilStored(s, c.user, FULL)));
    await crashAndRestart(s);
    const before = tally.notes.length;
    await Promise.all(cases.map((c) => checkDm(s.api, s.telegram, tally, c.user, c.text, FULL, RECOVERY_MS)));
    for (let i = before; i < tally.notes.length; i++) tally.notes[i] = `${tally.notes[i]} [${variant}]`;
  }
}

/** Resolves once the transcript of `user`'s DM session holds `reply`. */
async function untilStored(s: Stack, user: number, reply: string): Promise<void> {
  const session = await sessionByKey(s.api, dmKey(user));
  await until(30_000, `the reply stored in ${session.id}`, async () => ((await transcript(s.api, session.id)).some((m) => m.role === "assistant" && m.content === reply) ? true : undefined), 100);
}

const unavailable = { ok: false, error_code: 500, description: "Internal Server Error" };
const tooMany = (s: number) => ({ ok: false, error_code: 429, description: `Too Many Requests: retry after ${s}`, parameters: { retry_after: s } });

/**
 * (c) the final edit answered 500, then 429 with retry_after: the reply ends complete. The
 * last round asks for 31 s (past the in-memory wait, so the session's alarm carries it) and
 * kills the Worker during the wait.
 */
export async function platformErrors(s: Stack, o: CrashOptions, tally: Tally): Promise<void> {
  for (let r = 0; r < o.rounds; r++) {
    const deferred = r === o.rounds - 1;
    s.reset();
    const cases = await heldTurns(s, `chaos c ${r}`, o.parallel);
    for (const c of cases) {
      s.telegram.failNext(finalEdit(c.user), 500, unavailable);
      s.telegram.failNext(finalEdit(c.user), 429, tooMany(deferred ? 31 : 1));
    }
    await releaseOnPost(cases);
    if (deferred) {
      // The third attempt is due 31 s after the 429: the Worker dies before it.
      await until(60_000, "c: the 500 and the 429 answered", () => (cases.every((c) => s.telegram.calls.filter(finalEdit(c.user)).length >= 2) ? true : undefined));
      await crashAndRestart(s);
    }
    await Promise.all(cases.map((c) => checkDm(s.api, s.telegram, tally, c.user, c.text, FULL, RECOVERY_MS)));
  }
}
