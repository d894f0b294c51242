import { tg } from "../../test/support/fixtures.ts";
import { telegramHeaders } from "../../test/support/signing.ts";
import { until, within, type WorkerClient } from "./harness.ts";
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

/** Resolves once the bot posted in `chat` a message reading `text` (bounded). */
export async function untilPosted(view: PlatformView, chat: number | string, text: string, ms = 30_000): Promise<void> {
  const want = text.trim();
  await until(ms, `a message "${want}" in chat ${chat}`, () => (view.messages(chat).some((m) => m.plain === want) ? true : undefined));
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

/** All of `ps`, within one bound (the first failure, or the timeout, rejects). */
export async function all<T>(ms: number, what: string, ps: Array<Promise<T>>): Promise<T[]> {
  return within(ms, Promise.all(ps), what);
}
