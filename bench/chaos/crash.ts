/**
 * Scenarios (a), (b), (c): the edge Worker killed with kill -9 mid-turn and mid-final-delivery,
 * and a platform failing the final edit (500, then 429 with retry_after), once with the wait
 * outliving the Worker. After each restart (same port, same --persist-to storage) nothing is
 * nudged: the session objects' own alarms must bring every reply home.
 */
import { checkChat } from "./check.ts";
import { oneMessage, PLATFORMS, telegramDm, type OneMessage } from "./chats.ts";
import { pause, transcript, until, within, type Tally } from "./harness.ts";
import type { Stack } from "./stack.ts";
import { all, freshUser, sendDm, untilSettledAfterPost } from "./telegram-dm.ts";

export interface CrashOptions {
  rounds: number;
  /** Chats (per platform in b and c) with a turn in flight at each kill. */
  parallel: number;
}

/** How long a reply may take after a restart: the watchdog alarm (30 s) plus a slow start. */
const RECOVERY_MS = 120_000;
/** A held model stream gives up after this (the bench always releases or kills first). */
const HOLD_MS = 180_000;

const held = ["part one "];
const rest = ["and part two"];
const FULL = "part one and part two";

interface HeldCase extends OneMessage {
  gate: { release(): void };
  /** Resolves once the chat shows the first words. */
  posted: Promise<void>;
}

/** `n` chats per platform, each sent one message whose answer streams "part one " and is then held. */
async function heldTurns(s: Stack, tag: string, n: number): Promise<HeldCase[]> {
  const cases = PLATFORMS.flatMap((p) =>
    Array.from({ length: n }, (_, i) => {
      const m = oneMessage(s, p, `${tag} ${p} case ${i}`);
      return { ...m, gate: s.llm.hold(held, rest, HOLD_MS), posted: m.view.shows(m.chat, held[0]!) };
    }),
  );
  for (const c of cases) await c.send();
  return cases;
}

/**
 * Releases each held stream the moment its first words show: the rest then arrives before
 * the next live edit is due (a second or more on every platform), so the final delivery is
 * what carries it.
 */
function releaseOnPost(cases: readonly HeldCase[]): Promise<void[]> {
  return all(
    60_000,
    "the first words shown",
    cases.map((c) => c.posted.then(() => c.gate.release())),
  );
}

async function crashAndRestart(s: Stack): Promise<void> {
  await s.worker.crash();
  await within(90_000, s.worker.restart(), "wrangler dev restarting");
}

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
    await all(
      60_000,
      "a: every turn streaming",
      cases.map((c) => untilSettledAfterPost(s.telegram, c.user)),
    );
    for (const c of cases) await sendDm(s.api, c.user, c.texts[1]!);
    await crashAndRestart(s);
    // The re-run and the next turn take the default answer: the echo of the message.
    await Promise.all(
      cases.map((c) =>
        checkChat(
          s.api,
          telegramDm(s, c.user),
          tally,
          c.texts.map((text) => ({ text, expected: `echo: ${text}` })),
          RECOVERY_MS,
        ),
      ),
    );
  }
}

/** The three moments of (b), one per round in turn. */
const DELIVERY_VARIANTS = ["final edit held, not applied", "final edit applied, its answer lost", "last live edit hanging"] as const;

/** Longer than every platform's least interval between two edits (Telegram DMs 1.1 s, Slack 1.2 s). */
const PAST_EDIT_INTERVAL_MS = 2_000;

/**
 * (b) kill -9 while the platform holds the edit that completes the reply, on each
 * platform: the final delivery's, not yet applied; the same, applied with only its answer
 * lost (a Telegram retry meets "message is not modified"); or the last live edit, with the
 * reply stored but the turn not yet ended. Released at once after the first words, the
 * rest arrives before the next live edit is due, so the final delivery carries it;
 * released once an edit interval has passed, a live edit is due at once and carries it.
 */
export async function midDelivery(s: Stack, o: CrashOptions, tally: Tally): Promise<void> {
  for (let r = 0; r < o.rounds; r++) {
    const variant = DELIVERY_VARIANTS[r % DELIVERY_VARIANTS.length]!;
    s.reset();
    const cases = await heldTurns(s, `chaos b ${r}`, o.parallel);
    const holds = cases.map((c) => c.view.hold(c.editTo(FULL), { applied: variant === "final edit applied, its answer lost" }));
    if (variant === "last live edit hanging") {
      await all(
        60_000,
        "b: the first words shown",
        cases.map((c) => c.posted),
      );
      await pause(PAST_EDIT_INTERVAL_MS);
      for (const c of cases) c.gate.release();
    } else await releaseOnPost(cases);
    await all(
      60_000,
      `b (${variant}): every edit completing the reply at the platform`,
      holds.map((h) => h.arrived),
    );
    // A live edit may leave before the model's last event: kill once the reply is stored
    // (the final delivery's edit always comes after that).
    await all(
      60_000,
      "b: the replies stored",
      cases.map((c) => untilStored(s, c, FULL)),
    );
    await crashAndRestart(s);
    const before = tally.notes.length;
    await Promise.all(cases.map((c) => checkChat(s.api, c, tally, [{ text: c.text, expected: FULL }], RECOVERY_MS)));
    for (let i = before; i < tally.notes.length; i++) tally.notes[i] = `${tally.notes[i]} [${variant}]`;
  }
}

/** Resolves once the transcript of the conversation's session holds `reply`. */
async function untilStored(s: Stack, c: OneMessage, reply: string): Promise<void> {
  const session = await c.session();
  await until(
    30_000,
    `the reply stored in ${session.id}`,
    async () => ((await transcript(s.api, session.id)).some((m) => m.role === "assistant" && m.content === reply) ? true : undefined),
    100,
  );
}

/**
 * (c) the final edit answered 500, then 429 with retry_after (each platform's own shapes):
 * the reply ends complete. The last round asks for 31 s (past the in-memory wait, so the
 * session's alarm carries it) and kills the Worker during the wait.
 */
export async function platformErrors(s: Stack, o: CrashOptions, tally: Tally): Promise<void> {
  for (let r = 0; r < o.rounds; r++) {
    const deferred = r === o.rounds - 1;
    s.reset();
    const cases = await heldTurns(s, `chaos c ${r}`, o.parallel);
    for (const c of cases) {
      c.view.failNext(c.editTo(FULL), ...c.unavailable);
      c.view.failNext(c.editTo(FULL), ...c.tooMany(deferred ? 31 : 1));
    }
    await releaseOnPost(cases);
    if (deferred) {
      // The third attempt is due 31 s after the 429: the Worker dies before it.
      await until(60_000, "c: the 500 and the 429 answered", () => (cases.every((c) => c.view.calls.filter(c.editTo(FULL)).length >= 2) ? true : undefined));
      await crashAndRestart(s);
    }
    await Promise.all(cases.map((c) => checkChat(s.api, c, tally, [{ text: c.text, expected: FULL }], RECOVERY_MS)));
    for (const c of cases) {
      const [, refused, passed] = c.view.calls.filter(c.editTo(FULL));
      if (refused && passed)
        tally.info.push(
          `${c.platform}: asked to wait ${deferred ? 31 : 1} s, the next attempt came ${((passed.at - refused.at) / 1000).toFixed(1)} s later${deferred ? " (across a kill -9)" : ""}`,
        );
    }
  }
}
