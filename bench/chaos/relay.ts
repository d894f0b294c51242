/**
 * Scenarios (d) and (e), on a Worker relaying Telegram to the real `hermes-edge gateway`
 * (through a loopback proxy that captures the gateway's tokens):
 *   d. the gateway SIGKILLed with turns running, messages queued behind them and more sent
 *      while it is down, then restarted on the same --db: every message answered once;
 *   e. a captured token replayed, while the gateway is live and while it is down: refused,
 *      nothing relayed to the replayer, and the real gateway keeps its traffic.
 */
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { GatewayStore } from "../../cli/gateway/store.ts";
import { SqlTranscript } from "../../workers/runtime/index.ts";
import { onCleanup, Timeout, within, type Tally } from "./harness.ts";
import { barrage } from "./hostile.ts";
import { startGateway, tokenTap, type GatewayProcess, type TokenTap } from "./gateway.ts";
import type { Stack } from "./stack.ts";
import { all, dmKey, freshUser, quiet, sendDm, untilPosted, untilSettledAfterPost } from "./telegram-dm.ts";

export const RELAY_ID = "chaos-gw";
export const RELAY_SECRET = "chaos-relay-secret";

/** What both scenarios run on: the stack, the proxy, and a gateway database of their own. */
export interface RelayRig {
  s: Stack;
  tap: TokenTap;
  db: string;
  gateway(): GatewayProcess;
  /** Appends to the --log file, if any. */
  log(text: string): void;
  close(): Promise<void>;
}

export async function relayRig(s: Stack, logFile?: string): Promise<RelayRig> {
  const tap = await tokenTap(Number(new URL(s.worker.url).port));
  const dir = mkdtempSync(path.join(tmpdir(), "hermes-chaos-gw-"));
  const forget = onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  const db = path.join(dir, "gateway.db");
  return {
    s,
    tap,
    db,
    gateway: () => startGateway({ relayUrl: tap.url, gatewayId: RELAY_ID, secret: RELAY_SECRET, llmUrl: s.llmUrl, db }),
    log: (text) => void (logFile && appendFileSync(logFile, `${text}\n`)),
    async close() {
      await tap.close();
      rmSync(dir, { recursive: true, force: true });
      forget();
    },
  };
}

const CONNECTED = "relay: connected";

/** A relayed Telegram DM: its messages and the model's whole answers (default: their echoes). */
interface RelayedChat {
  user: number;
  texts: string[];
  expected?: string[];
}

const answerTo = (c: RelayedChat, i: number) => (c.expected?.[i] ?? `echo: ${c.texts[i]}`).trim();

/**
 * Checks each chat shows exactly the answers to its messages, in order, once each, and that
 * the gateway's own transcript (its --db, read after it stopped) agrees.
 */
function checkChats(r: RelayRig, tally: Tally, chats: readonly RelayedChat[]): void {
  const store = GatewayStore.open(r.db);
  try {
    for (const c of chats) {
      const shown = r.s.telegram.messages(c.user).map((m) => m.plain);
      const rows = new SqlTranscript(store.sql, store.sessionRef(dmKey(c.user))).load().map((r) => r.message);
      for (const [i, t] of c.texts.entries()) {
        tally.cases++;
        const want = answerTo(c, i);
        const times = shown.filter((x) => x === want).length;
        const stored = rows.filter((m) => m.role === "user" && m.content === t).length;
        const replies = rows.filter((m) => m.role === "assistant" && m.content === want).length;
        if (times === 0 && replies === 0) tally.add("lost", `chat ${c.user}: "${t}" never answered; shown ${JSON.stringify(shown)}`);
        else if (times === 0) tally.add("truncated", `chat ${c.user}: "${t}" answered in the transcript, not shown in full; shown ${JSON.stringify(shown)}`);
        if (times > 1 || stored > 1 || replies > 1)
          tally.add("doubled", `chat ${c.user}: "${t}" shown ${times}×, stored ${stored}×, answered ${replies}× in the gateway's transcript`);
      }
      const expected = c.texts.map((_, i) => answerTo(c, i));
      const extra = shown.filter((x) => !expected.includes(x));
      if (extra.length) tally.add("doubled", `chat ${c.user}: messages besides the answers: ${JSON.stringify(extra)}`);
      else if (new Set(shown).size === shown.length && shown.join("\n") !== expected.filter((x) => shown.includes(x)).join("\n"))
        tally.info.push(`chat ${c.user}: answers shown out of order: ${JSON.stringify(shown)}`);
    }
  } finally {
    store.close();
  }
}

/** (d) SIGKILL of the gateway with messages in flight; the restart on the same --db answers each once. */
export async function gatewayKilled(r: RelayRig, o: { rounds: number; parallel: number }, tally: Tally): Promise<void> {
  const { s } = r;
  for (let round = 0; round < o.rounds; round++) {
    s.reset();
    let gw = r.gateway();
    await gw.waitFor(CONNECTED);
    const chats = Array.from({ length: o.parallel }, (_, i) => ({ user: freshUser(), texts: [0, 1, 2].map((n) => `chaos d ${round}.${i} message ${n}`) }));
    for (const _ of chats) s.llm.hold(["thinking "], ["never"], 180_000);
    // First messages: each turn streams and is held; second ones wait behind them, taken in and acked.
    for (const c of chats) await sendDm(s.api, c.user, c.texts[0]!);
    await all(
      60_000,
      "d: every first turn streaming",
      chats.map((c) => untilSettledAfterPost(s.telegram, c.user)),
    );
    for (const c of chats) await sendDm(s.api, c.user, c.texts[1]!);
    await gw.kill9();
    // Third ones arrive while no gateway is connected: the connector keeps them.
    for (const c of chats) await sendDm(s.api, c.user, c.texts[2]!);
    gw = r.gateway();
    await gw.waitFor(CONNECTED);
    await waitAnswers(r, chats, 120_000);
    await quiet(s.telegram);
    const code = await gw.stop();
    const reran = gw.stderr().split("re-running turn").length - 1;
    tally.info.push(`round ${round}: the restarted gateway re-ran ${reran} turn(s) its predecessor left running`);
    r.log(`--- gateway (d, round ${round}, after the restart)\n${gw.stderr()}`);
    if (code !== 0) tally.add("lost", `the restarted gateway exited ${code} on SIGTERM:\n${gw.stderr().slice(-500)}`);
    checkChats(r, tally, chats);
  }
}

/**
 * (d, the other side) kill -9 of wrangler under a live gateway: its turns go on, their
 * replies wait for the connector, the Relay object's buffer outlives the crash, and after
 * the restart every message (one sent once the Worker is back included) is answered once.
 */
export async function connectorKilled(r: RelayRig, o: { rounds: number; parallel: number }, tally: Tally): Promise<void> {
  const { s } = r;
  for (let round = 0; round < o.rounds; round++) {
    s.reset();
    const gw = r.gateway();
    await gw.waitFor(CONNECTED);
    const chats: RelayedChat[] = Array.from({ length: o.parallel }, (_, i) => {
      const texts = [0, 1, 2].map((n) => `chaos d' ${round}.${i} message ${n}`);
      return { user: freshUser(), texts, expected: ["thinking and the rest", `echo: ${texts[1]}`, `echo: ${texts[2]}`] };
    });
    const gates = chats.map(() => s.llm.hold(["thinking "], ["and the rest"], 180_000));
    for (const c of chats) await sendDm(s.api, c.user, c.texts[0]!);
    await all(
      60_000,
      "d': every first turn streaming",
      chats.map((c) => untilSettledAfterPost(s.telegram, c.user)),
    );
    for (const c of chats) await sendDm(s.api, c.user, c.texts[1]!);
    await s.worker.crash();
    // The turns end while the connector is down: their replies must wait for it.
    for (const g of gates) g.release();
    await within(90_000, s.worker.restart(), "wrangler dev restarting");
    await gw.waitFor(CONNECTED, 2, 90_000);
    for (const c of chats) await sendDm(s.api, c.user, c.texts[2]!);
    await waitAnswers(r, chats, 120_000);
    await quiet(s.telegram);
    const code = await gw.stop();
    r.log(`--- gateway (d', round ${round})\n${gw.stderr()}`);
    if (code !== 0) tally.add("lost", `the gateway exited ${code} on SIGTERM:\n${gw.stderr().slice(-500)}`);
    checkChats(r, tally, chats);
  }
}

/** Waits (bounded) until every message's echo shows; a timeout leaves the counting to checkChats. */
async function waitAnswers(r: RelayRig, chats: readonly RelayedChat[], ms: number): Promise<void> {
  try {
    await all(
      ms,
      "every answer shown",
      chats.flatMap((c) => c.texts.map((_, i) => untilPosted(r.s.telegram, c.user, answerTo(c, i), ms))),
    );
  } catch (err) {
    if (!(err instanceof Timeout)) throw err;
  }
}

/** What a replayed token got: its close, and any frame the connector sent it. */
interface ReplayResult {
  code: number | null;
  reason: string;
  frames: string[];
}

/** Opens /relay with `token` as a thief would (saying hello), holds it up to `ms`, and reports. */
async function replay(workerUrl: string, token: string, ms: number, whileOpen?: () => Promise<void>): Promise<ReplayResult> {
  const ws = new WebSocket(`${workerUrl.replace(/^http/, "ws")}/relay`, { headers: { authorization: `Bearer ${token}` } } as unknown as string[]);
  const frames: string[] = [];
  ws.addEventListener("message", (e) => frames.push(String(e.data)));
  ws.addEventListener("open", () => ws.send(`${JSON.stringify({ type: "hello", platform: "telegram", botId: "" })}\n`));
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.addEventListener("close", (e) => resolve({ code: e.code, reason: e.reason })));
  await whileOpen?.();
  try {
    const c = await within(ms, closed, "the replayed socket closing");
    return { ...c, frames };
  } catch (err) {
    if (!(err instanceof Timeout)) throw err;
    ws.close();
    return { code: null, reason: "still open", frames };
  }
}

function judgeReplay(tally: Tally, when: string, got: ReplayResult): void {
  tally.cases++;
  const relayed = got.frames.filter((f) => /"type":"(descriptor|inbound|interrupt_inbound)"/.test(f));
  if (got.code === null || relayed.length > 0) {
    tally.add(
      "breached",
      `a replayed token (${when}) was accepted: ${got.code === null ? "its socket stayed open" : `closed ${got.code}`}, ${relayed.length} frame(s) relayed to it`,
    );
  } else if (got.code !== 4401 && got.code !== 4409) tally.add("breached", `a replayed token (${when}) closed with ${got.code} ${got.reason}, not a refusal`);
  tally.info.push(`replay ${when}: closed ${got.code} ${got.reason}`);
}

/**
 * (e) a token the proxy captured, replayed while the real gateway is live and while it is
 * down (with a message arriving meanwhile): refused both times, nothing relayed to it, and
 * the real gateway answers everything, the message sent while it was down included.
 */
export async function tokenReplay(r: RelayRig, o: { rounds: number }, tally: Tally): Promise<void> {
  const { s } = r;
  for (let round = 0; round < o.rounds; round++) {
    s.reset();
    let gw = r.gateway();
    await gw.waitFor(CONNECTED);
    const captured = r.tap.tokens.at(-1);
    if (!captured) throw new Error("e: the proxy saw no token");
    judgeReplay(tally, "while the gateway is live", await replay(s.worker.url, captured, 10_000));
    const chat = { user: freshUser(), texts: [`chaos e ${round} live`, `chaos e ${round} while away`] };
    await sendDm(s.api, chat.user, chat.texts[0]!);
    await waitAnswers(r, [{ user: chat.user, texts: [chat.texts[0]!] }], 60_000);
    if (/took over|4409 replaced/.test(gw.stderr())) tally.add("breached", "the replay displaced the real gateway");

    const last = r.tap.tokens.at(-1)!;
    // Killed once the answer's turn has ended: (d) is the scenario for kills mid-turn.
    await quiet(s.telegram);
    await gw.kill9();
    const away = await replay(s.worker.url, last, 10_000, () => sendDm(s.api, chat.user, chat.texts[1]!));
    judgeReplay(tally, "while the gateway is down", away);
    gw = r.gateway();
    await gw.waitFor(CONNECTED);
    await waitAnswers(r, [chat], 60_000);
    await quiet(s.telegram);
    await gw.stop();
    r.log(`--- gateway (e, round ${round}, after the restart)\n${gw.stderr()}`);
    checkChats(r, tally, [chat]);
  }
}

/**
 * (g) on the relaying Worker: hostile signed Telegram bodies go through the relay intake
 * (no 5xx) and into the buffer of a gateway that is away; the gateway then connects, takes
 * the replay without dying, and still answers an ordinary message once.
 */
export async function relayedHostile(r: RelayRig, o: { bodies: number }, tally: Tally): Promise<void> {
  const { s } = r;
  s.reset();
  await barrage(s.api, tally, "telegram", o.bodies, s.llmUrl, 1701, () => s.llm.calls.length);
  const gw = r.gateway();
  await gw.waitFor(CONNECTED);
  const chat = { user: freshUser(), texts: ["chaos g after the hostile bodies"] };
  await sendDm(s.api, chat.user, chat.texts[0]!);
  await waitAnswers(r, [chat], 60_000);
  await quiet(s.telegram);
  const code = await gw.stop();
  tally.info.push(`the gateway took the buffered replay and made ${s.llm.calls.length} model calls`);
  r.log(`--- gateway (g, relayed)\n${gw.stderr()}`);
  if (code !== 0) tally.add("lost", `the gateway exited ${code} after the hostile replay:\n${gw.stderr().slice(-500)}`);
  checkChats(r, tally, [chat]);
}
