import { createExecutionContext, listDurableObjectIds, waitOnExecutionContext } from "cloudflare:test";
import worker from "../../workers/index.ts";
import { tg } from "../support/fixtures.ts";
import { discordHeaders, slackHeaders, telegramHeaders, whatsappHeaders } from "../support/signing.ts";
import { configEnv, env } from "./config.ts";

/** Ids of the Inbox and session objects the Worker itself reached since the last settleTouched(). */
const touched = { inboxes: new Set<string>(), agents: new Set<string>() };

/** A namespace that notes the id of every object the Worker gets from it. */
function noting<T extends object>(ns: T, into: Set<string>): T {
  return new Proxy(ns, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown;
      if (typeof value !== "function") return value;
      if (key === "get")
        return (id: DurableObjectId, ...rest: unknown[]) => (into.add(id.toString()), (value as (...a: unknown[]) => unknown).call(target, id, ...rest));
      if (key === "getByName")
        return (name: string, ...rest: unknown[]) => (
          into.add((target as unknown as DurableObjectNamespace).idFromName(name).toString()),
          (value as (...a: unknown[]) => unknown).call(target, name, ...rest)
        );
      return (value as (...a: unknown[]) => unknown).bind(target);
    },
  });
}

const notingEnvs = new WeakMap<Env, Env>();

/** The env of the configuration in use, with the Inbox and session namespaces noting what the Worker reaches. */
function notingEnv(): Env {
  const env = configEnv();
  let noted = notingEnvs.get(env);
  if (noted === undefined) {
    noted = new Proxy(env, {
      get(target, key) {
        if (key === "INBOX") return noting(target.INBOX, touched.inboxes);
        if (key === "SESSION_AGENT") return noting(target.SESSION_AGENT, touched.agents);
        return Reflect.get(target, key, target) as unknown;
      },
    });
    notingEnvs.set(env, noted);
  }
  return noted;
}

/** Delivers a webhook to the Worker and waits for the work it left in waitUntil. */
export async function deliver(platform: string, body: string | Uint8Array, headers: Record<string, string>): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(`http://edge.test/webhooks/${platform}`, { method: "POST", headers, body }), notingEnv(), ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

/** A request of a Matrix homeserver under the registered URL (`/webhooks/matrix<path>`), waiting for the work it left in waitUntil. */
export async function toMatrix(path: string, body: string, headers: Record<string, string>, method = "PUT"): Promise<Response> {
  const ctx = createExecutionContext();
  const init: RequestInit = method === "GET" ? { method, headers } : { method, headers, body };
  const res = await worker.fetch(new Request(`http://edge.test/webhooks/matrix${path}`, init), notingEnv(), ctx);
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
  let mine: DurableObjectId[] = [];
  for (let i = 0; i < 2000 && !done(); i++) {
    // This file's session objects (made since its start, or reached by deliver()); every one
    // before the mark is set. Listed again every 8th look only: a listing costs a conversion
    // of every object id in the runtime (hundreds), the look itself one call per object.
    if (i % 8 === 0) {
      const all = await listDurableObjectIds(env.SESSION_AGENT);
      const start = fileStart;
      const own = start ? all.filter((id) => !start.agents.has(id.toString()) || touched.agents.has(id.toString())) : all;
      mine = own.length > 0 ? own : all;
    }
    await Promise.all(mine.map((id) => env.SESSION_AGENT.get(id).status()));
  }
  if (!done()) throw new Error(`never happened: ${what}`);
}

/** Waits until a held model stream has started (the turn reached the model). */
export const untilStarted = (gate: { started: boolean }) => until(() => gate.started, "the model was called");

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
 * Waits until every Inbox has handed its deliveries on and every session's object has no
 * turn running, queued or being delivered, with D1 holding their copies.
 */
export async function settle(): Promise<void> {
  if (fileStart) return settleTouched(fileStart);
  for (let round = 0; round < 5; round++) {
    const inboxes = await listDurableObjectIds(env.INBOX);
    await Promise.all(inboxes.map((id) => env.INBOX.get(id).idle()));
    const agents = await listDurableObjectIds(env.SESSION_AGENT);
    await Promise.all(agents.map((id) => env.SESSION_AGENT.get(id).idle()));
    // A turn's end can hand work back to an Inbox (a handoff binding); go round until quiet.
    const again = await listDurableObjectIds(env.INBOX);
    if (again.length === inboxes.length) return;
  }
}

/**
 * The objects that existed when this file's tests began (test/worker/setup.ts marks it). A
 * runtime serves many files one after another (isolate: false), so late files would otherwise
 * wait on, and wake, hundreds of earlier files' objects in every settle(); from the mark on,
 * settle() waits on what this file made and what deliver() reached, as settleTouched() does.
 */
let fileStart: { inboxes: Set<string>; agents: Set<string> } | null = null;

export async function markFileStart(): Promise<void> {
  fileStart = await objectsNow();
  touched.inboxes.clear();
  touched.agents.clear();
}

/** The Inbox and session objects that exist now, for settleTouched() to tell new ones from old. */
export async function objectsNow(): Promise<{ inboxes: Set<string>; agents: Set<string> }> {
  const [inboxes, agents] = await Promise.all([listDurableObjectIds(env.INBOX), listDurableObjectIds(env.SESSION_AGENT)]);
  return { inboxes: new Set(inboxes.map((id) => id.toString())), agents: new Set(agents.map((id) => id.toString())) };
}

/**
 * settle(), for files that deliver many webhooks into a runtime holding hundreds of other
 * files' objects: it waits on the objects the Worker reached through deliver() since the
 * last call, the sessions their Inboxes are bound to, and every object created since
 * `before`, until a round reaches nothing new, instead of on every object there is.
 */
export async function settleTouched(before: { inboxes: Set<string>; agents: Set<string> }): Promise<void> {
  const doneInboxes = new Set<string>();
  const doneAgents = new Set<string>();
  const fresh = (ids: Iterable<string>, done: Set<string>, old?: Set<string>) => [...new Set(ids)].filter((id) => !done.has(id) && !old?.has(id));
  for (let round = 0; round < 20; round++) {
    // What deliver() reached since the last round; once that is nothing, the objects made since
    // `before` some other way (a handoff's destination). Listing them converts every object id
    // in the runtime, hundreds late in a run, so it is done only then.
    let inboxes = fresh(touched.inboxes, doneInboxes);
    let agents = fresh(touched.agents, doneAgents);
    touched.inboxes.clear();
    touched.agents.clear();
    if (inboxes.length === 0 && agents.length === 0) {
      const now = await objectsNow();
      inboxes = fresh(now.inboxes, doneInboxes, before.inboxes);
      agents = fresh(now.agents, doneAgents, before.agents);
      if (inboxes.length === 0 && agents.length === 0) return;
    }
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
