import { tg } from "../../test/support/fixtures.ts";
import { telegramHeaders } from "../../test/support/signing.ts";
import { answerOf, pause, sessionByKey, Tally, Timeout, transcript, until, within, type WorkerClient } from "./harness.ts";
import type { PlatformView, SeenCall } from "./view.ts";

/** Telegram DMs of the bench: each case gets a user (and so a chat) of its own, allowed by CHAOS_VARS. */
export const DM_USERS = { first: 7001, count: 400 };
let nextUser = DM_USERS.first;

/** A fresh DM chat (its user id). */
export function freshUser(): number {
  if (nextUser >= DM_USERS.first + DM_USERS.count) throw new Error("out of bench users: raise DM_USERS.count");
  return nextUser++;
}

/** The allow-list entry covering the bench's DM users. */
export function dmAllowList(): string {
  return Array.from({ length: DM_USERS.count }, (_, i) => String(DM_USERS.first + i)).join(",");
}

export const dmKey = (user: number) => `agent:main:telegram:dm:${user}`;

/** Sends a signed Telegram DM from `user`. */
export async function sendDm(api: WorkerClient, user: number, text: string): Promise<void> {
  const status = await api.webhook("telegram", JSON.stringify(tg.dm(text, user)), telegramHeaders());
  if (status !== 200) throw new Error(`Telegram webhook answered ${status}`);
}

export const isCall = (method: string, chat: number) => (c: SeenCall) => c.path.endsWith(`/${method}`) && String(c.body.chat_id) === String(chat);

/** Resolves once the bot posted in `chat` a message showing `text` (bounded). */
export async function untilPosted(view: PlatformView, chat: number, text: string, ms = 30_000): Promise<void> {
  await until(ms, `a message "${text}" in chat ${chat}`, () => (view.messages(chat).some((m) => m.text === text) ? true : undefined));
}

/**
 * Resolves once `chat` got a typing refresh after the bot's first message there: the
 * session object has had seconds since the platform answered, so the message's id is
 * stored (a kill before that could only make the re-run post again, which no design avoids:
 * the platform's post is not idempotent).
 */
export async function untilSettledAfterPost(view: PlatformView, chat: number, ms = 30_000): Promise<void> {
  await until(ms, `a typing refresh in chat ${chat}`, () => {
    const post = view.calls.findIndex(isCall("sendMessage", chat));
    return post >= 0 && view.calls.slice(post + 1).some(isCall("sendChatAction", chat)) ? true : undefined;
  });
}

/** Waits until `view` had no call for `quietMs` (bounded): late doubles would show by then. */
export async function quiet(view: PlatformView, quietMs = 1500, ms = 20_000): Promise<void> {
  await until(ms, `${view.platform} going quiet`, () => (Date.now() - view.lastCall >= quietMs ? true : undefined), 100);
}

/** One message of a chat and the model's whole answer to it. */
export interface Exchange {
  text: string;
  expected: string;
}

/**
 * Checks a DM chat: each message answered once, in full (`expected`: the model's whole
 * answer), each answer shown once, as the transcript has it; nothing else posted. Counts
 * into `tally`; answers shown out of order are noted in its info.
 */
export async function checkChat(api: WorkerClient, view: PlatformView, tally: Tally, user: number, exchanges: readonly Exchange[], waitMs: number): Promise<void> {
  tally.cases += exchanges.length;
  try {
    await all(waitMs, "every answer shown", exchanges.map((x) => untilPosted(view, user, x.expected, waitMs)));
  } catch (err) {
    if (!(err instanceof Timeout)) throw err;
  }
  let messages;
  try {
    const session = await sessionByKey(api, dmKey(user));
    await until(30_000, `session ${session.id} idle`, async () => ((await api.json<{ session: { running: boolean } }>(`/v1/sessions/${session.id}`)).session.running ? undefined : true), 250);
    await quiet(view);
    messages = await transcript(api, session.id);
  } catch (err) {
    if (!(err instanceof Timeout)) throw err;
    tally.add("lost", `chat ${user}: ${err.message}`);
    return;
  }
  const shown = view.messages(user).map((m) => m.text);
  const said = JSON.stringify(shown.map((t) => t.slice(0, 40)));
  for (const x of exchanges) {
    const { stored, replies } = answerOf(messages, x.text);
    const reply = replies.at(-1);
    if (!reply || reply.finish_reason === "error") {
      tally.add("lost", `chat ${user}: "${x.text}": ${reply ? `the transcript ends with a failure (${reply.content?.slice(0, 60)})` : "no reply in the transcript"}; shown ${said}`);
      continue;
    }
    if (stored > 1 || replies.length > 1) tally.add("doubled", `chat ${user}: "${x.text}" stored ${stored}×, ${replies.length} replies in the transcript`);
    const times = shown.filter((t) => t === reply.content).length;
    if (times > 1) tally.add("doubled", `chat ${user}: "${x.text}": its answer posted ${times}×`);
    if (reply.content !== x.expected) tally.add("truncated", `chat ${user}: the transcript's reply to "${x.text}" is ${JSON.stringify(reply.content?.slice(0, 80))}, the model said ${JSON.stringify(x.expected)}`);
    else if (times === 0) tally.add("truncated", `chat ${user}: the answer to "${x.text}" never showed in full; shown ${said}`);
  }
  const expected = exchanges.map((x) => x.expected);
  const extra = shown.filter((t) => !expected.includes(t));
  if (extra.length > 0) tally.add("doubled", `chat ${user}: posted besides the answers: ${JSON.stringify(extra.map((t) => t.slice(0, 40)))}`);
  const order = shown.filter((t) => expected.includes(t));
  if (new Set(order).size === order.length && order.join("\n") !== expected.filter((t) => order.includes(t)).join("\n")) tally.info.push(`chat ${user}: answers shown out of order: ${said}`);
}

/** {@link checkChat} for a chat of one message. */
export function checkDm(api: WorkerClient, view: PlatformView, tally: Tally, user: number, text: string, expected: string, waitMs: number): Promise<void> {
  return checkChat(api, view, tally, user, [{ text, expected }], waitMs);
}

/** Every promise, each bounded; a failure of one is thrown after all settled. */
export async function all<T>(ms: number, what: string, ps: Array<Promise<T>>): Promise<T[]> {
  return within(ms, Promise.all(ps), what);
}

export { pause };
