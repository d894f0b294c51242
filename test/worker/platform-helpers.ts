import { createExecutionContext, listDurableObjectIds, waitOnExecutionContext } from "cloudflare:test";
import worker from "../../workers/index.ts";
import { tg } from "../support/fixtures.ts";
import { discordHeaders, slackHeaders, telegramHeaders, whatsappHeaders } from "../support/signing.ts";
import { env, workerEnv } from "./config.ts";
import { reached } from "./reached.ts";

/** Delivers a webhook to the Worker and waits for the work it left in waitUntil. */
export async function deliver(platform: string, body: string | Uint8Array, headers: Record<string, string>): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(`http://edge.test/webhooks/${platform}`, { method: "POST", headers, body }), workerEnv(), ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

/** A request of a Matrix homeserver under the registered URL (`/webhooks/matrix<path>`), waiting for the work it left in waitUntil. */
export async function toMatrix(path: string, body: string, headers: Record<string, string>, method = "PUT"): Promise<Response> {
  const ctx = createExecutionContext();
  const init: RequestInit = method === "GET" ? { method, headers } : { method, headers, body };
  const res = await worker.fetch(new Request(`http://edge.test/webhooks/matrix${path}`, init), workerEnv(), ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

export const toTelegram = (update: unknown, headers = telegramHeaders()) => deliver("telegram", JSON.stringify(update), headers);

/** Sends a command in a Telegram DM and waits until it was answered. */
export async function tgCommand(name: string, args = "", userId = 1001): Promise<Response> {
  const res = await toTelegram(tg.command(name, args, userId));
  await inboxIdle(`agent:main:telegram:dm:${userId}`);
  return res;
}

/** Waits (through the object's own I/O, no timers) until the session runs a turn. */
export async function untilRunning(sessionId: string): Promise<void> {
  const agent = env.SESSION_AGENT.getByName(sessionId);
  for (let i = 0; i < 1000; i++) if ((await agent.status()).running) return;
  throw new Error(`session ${sessionId} never started its turn`);
}

/**
 * Waits until `done()` holds, going through the session objects' I/O between looks (no
 * timers): for progress a fake records (a held model stream started, a tool was called).
 */
export async function until(done: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 2000 && !done(); i++) {
    // The session objects reached since this suite began (every one, when none was: a suite
    // whose first wait this is before it reached any).
    const mine =
      reached.suiteAgents.size > 0 ? [...reached.suiteAgents].map((id) => env.SESSION_AGENT.idFromString(id)) : await listDurableObjectIds(env.SESSION_AGENT);
    await Promise.all(mine.map((id) => env.SESSION_AGENT.get(id).status()));
  }
  if (!done()) throw new Error(`never happened: ${what}`);
}

/** Waits until a held model stream has started (the turn reached the model). */
export const untilStarted = (gate: { started: boolean }) => until(() => gate.started, "the model was called");

/**
 * Waits until a held model stream has started, yielding to timers: where the turn waits on
 * one first (a held stream before it, released or cancelled: the fake polls its gate every
 * 2 ms), a loop of RPCs (until()) never lets it run. Up to 5 s.
 */
export async function untilStartedOnTimers(gate: { started: boolean }): Promise<void> {
  for (let i = 0; i < 5_000 && !gate.started; i++) await scheduler.wait(1);
  if (!gate.started) throw new Error("never happened: the next turn reached the model");
}

export async function toDiscord(interaction: unknown): Promise<Response> {
  const body = JSON.stringify(interaction);
  return deliver("discord", body, await discordHeaders(body));
}

export async function toSlack(payload: unknown, extra: Record<string, string> = {}): Promise<Response> {
  const body = typeof payload === "string" ? payload : JSON.stringify(payload);
  const type = typeof payload === "string" ? "application/x-www-form-urlencoded" : "application/json";
  return deliver("slack", body, { ...(await slackHeaders(body, undefined, undefined, type)), ...extra });
}

/**
 * Waits until every Inbox and session object reached since the last call (by the Worker, by
 * the objects themselves, by a test through the helpers: test/worker/reached.ts) has handed
 * its deliveries on and has no turn running, queued or being delivered, with D1 holding their
 * copies; and the sessions those Inboxes are bound to; until a round reaches nothing new.
 */
export async function settle(): Promise<void> {
  const doneInboxes = new Set<string>();
  const doneAgents = new Set<string>();
  const fresh = (ids: Iterable<string>, done: Set<string>) => [...new Set(ids)].filter((id) => !done.has(id));
  for (let round = 0; round < 50; round++) {
    const inboxes = fresh(reached.inboxes, doneInboxes);
    const agents = fresh(reached.agents, doneAgents);
    reached.inboxes.clear();
    reached.agents.clear();
    if (inboxes.length === 0 && agents.length === 0) return;
    const bound = await Promise.all(
      inboxes.map(async (id) => {
        doneInboxes.add(id);
        const inbox = env.INBOX.get(env.INBOX.idFromString(id));
        await inbox.idle();
        const session = await inbox.session();
        return session === null ? null : env.SESSION_AGENT.idFromName(session).toString();
      }),
    );
    const due = fresh([...agents, ...bound.filter((id): id is string => id !== null)], doneAgents);
    await Promise.all(due.map(async (id) => (doneAgents.add(id), env.SESSION_AGENT.get(env.SESSION_AGENT.idFromString(id)).idle())));
  }
  throw new Error("settle(): objects kept reaching new ones for 50 rounds");
}

/** Marks the start of a suite (test/worker/suites.ts): until() looks at the session objects it reaches from here on. */
export function markSuiteStart(): void {
  reached.suiteAgents.clear();
}

/** Waits until the Inbox of `key` handed its deliveries on (commands answered, turns queued). */
export async function inboxIdle(key: string): Promise<void> {
  await env.INBOX.getByName(key).idle();
}

/** The session a key's Inbox bound it to, once it handed its deliveries on. */
export async function sessionFor(key: string): Promise<string | null> {
  const inbox = env.INBOX.getByName(key);
  await inbox.idle();
  return inbox.session();
}

/** How many of a session's transcript rows D1 holds (its copy). */
export async function copiedMessages(sessionId: string): Promise<number> {
  const row = await env.DB.prepare("SELECT COUNT(*) AS n FROM messages WHERE session_id = ?").bind(sessionId).first<{ n: number }>();
  return row?.n ?? 0;
}

export async function routeOf(key: string): Promise<string | null> {
  const row = await env.DB.prepare("SELECT session_id FROM session_routes WHERE session_key = ?").bind(key).first<{ session_id: string }>();
  return row?.session_id ?? null;
}

export async function countRows(table: string): Promise<number> {
  return (await env.DB.prepare(`SELECT COUNT(*) AS n FROM ${table}`).first<{ n: number }>())!.n;
}

/** How many Inbox objects have storage (each took in at least one delivery). */
export async function inboxCount(): Promise<number> {
  return (await listDurableObjectIds(env.INBOX)).length;
}

/** Binds a session key to a session on purpose, as a handoff or /resume does (through its Inbox). */
export async function bind(key: string, sessionId: string): Promise<void> {
  await env.INBOX.getByName(key).bind({ sessionId, origin: { platform: "telegram", chatType: "group", chatId: "0" }, bound: true });
}

/** A WhatsApp Cloud API webhook, signed with the test app secret. */
export async function toWhatsApp(payload: unknown, headers?: Record<string, string>): Promise<Response> {
  const body = typeof payload === "string" ? payload : JSON.stringify(payload);
  return deliver("whatsapp", body, headers ?? (await whatsappHeaders(body)));
}
