import { abortAllDurableObjects, evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { InboxStore } from "../../durable-objects/inbox/store.ts";
import type { SessionAgent } from "../../durable-objects/session-agent/index.ts";
import { newRecord, RecordStore } from "../../durable-objects/session-agent/record.ts";
import { db } from "../../workers/db/client.ts";
import { routeUpsert } from "../../workers/db/mirror.ts";
import { buildSessionKey } from "../../workers/platforms/session-key.ts";
import { durableSql, SessionRuntime } from "../../workers/runtime/index.ts";
import { call, newSession } from "./helpers.ts";

const NOT_FOUND = { ok: false, code: "not_found" };
const target = { platform: "telegram" as const, private: true, ref: "{}" };
const unique = (what: string) => `${what}-${crypto.randomUUID()}`;
/** The message of a call that threw, taken with `.then(…, failed)`. */
const failed = (err: unknown) => (err instanceof Error ? err.message : String(err));
/**
 * The message of a session object's method that must throw, called inside the object: a
 * rejecting call through a stub is reported by the test runtime as "Uncaught (in promise)"
 * even when the test handles it (its Durable Object RPC wrapper leaks one rejection per
 * rejecting call, cloudflare/workers-sdk#14736); runInDurableObject does not go through it.
 */
const refusal = (stub: DurableObjectStub<SessionAgent>, call: (agent: SessionAgent) => Promise<unknown>) =>
  runInDurableObject(stub, (agent: SessionAgent) => call(agent).then(() => null, failed));
/** A plain, unaddressed "hi" from `source` (an Inbox ignores it unless the chat is bound). */
const hiFrom = <S>(source: S) => ({
  kind: "message" as const,
  deliveryId: "1",
  messageId: "1",
  text: "hi",
  attachments: [],
  addressed: false,
  bindsThread: false,
  source,
  target,
});

describe("objects know their names (getByName, ctx.id.name)", () => {
  it("every session method that needs its session answers the same not-found", async () => {
    const agent = env.SESSION_AGENT.getByName(unique("never-created"));
    const answers = {
      describe: await agent.describe(),
      update: await agent.update({ title: "x" }),
      compact: await agent.compact(),
      contextStatus: await agent.contextStatus(),
      applyRetention: await agent.applyRetention(Date.now()),
      toolList: await agent.toolList(),
      exportData: await agent.exportData(),
      messages: await agent.messages(),
      destroy: await agent.destroy(),
      startTurn: await agent.startTurn("hello"),
      enqueue: await agent.enqueue({ content: "hello", target, deliveryKey: "telegram:1" }),
      recover: await agent.recover(),
      requestHandoff: await agent.requestHandoff({ platform: "telegram", chatId: "1", thread: false }),
      handoff: await agent.handoff(),
      failPendingHandoff: await agent.failPendingHandoff("gone"),
      waitHandoff: await agent.waitHandoff(null, 0),
      expireHandoff: await agent.expireHandoff(Date.now()),
    };
    expect(answers).toEqual(Object.fromEntries(Object.keys(answers).map((k) => [k, NOT_FOUND])));
  });

  it("the session's id is the object's name: create and describe take no id, and a taken id says so", async () => {
    const id = unique("named");
    const agent = env.SESSION_AGENT.getByName(id);
    expect(await agent.create({ source: "cli", title: "by name", model: "m" })).toMatchObject({ ok: true, session: { id, title: "by name" } });
    expect(await agent.describe()).toMatchObject({ ok: true, session: { id } });
    expect(await agent.create({ source: "cli", model: "m" })).toEqual({ ok: false, code: "exists" });
    const exported = await agent.exportData();
    if (!exported.ok) throw new Error("the session was not found");
    expect(await agent.importData(exported.data)).toEqual({ ok: false, code: "exists" });
    // Another session's export cannot land in this object.
    const refused = await refusal(agent, (a) => a.importData({ ...exported.data, session: { ...exported.data.session, id: unique("other") } }));
    expect(refused).toMatch(/cannot be imported into the object of session/);
  });

  it("a session created before objects kept their own storage (only in D1) is found by its name", async () => {
    const id = unique("d1-only");
    const now = Date.now();
    const insert = "INSERT INTO sessions (id, source, title, started_at, last_active_at) VALUES (?, 'cli', 'from before', ?, ?)";
    await env.DB.prepare(insert).bind(id, now, now).run();
    await env.DB.prepare("INSERT INTO messages (session_id, role, content, created_at) VALUES (?, 'user', 'an old question', ?)").bind(id, now).run();
    const res = await call(`/v1/sessions/${id}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ session: { id, title: "from before" } });
    expect(await (await call(`/v1/sessions/${id}/messages`)).json()).toMatchObject({ messages: [{ role: "user", content: "an old question" }] });
  });

  it("a session made through the API is the object of that name (the stub the objects were made by before reaches it too)", async () => {
    const id = await newSession("same object");
    expect(env.SESSION_AGENT.getByName(id).id.equals(env.SESSION_AGENT.idFromName(id))).toBe(true);
    expect(await env.SESSION_AGENT.get(env.SESSION_AGENT.idFromName(id)).describe()).toMatchObject({ ok: true, session: { id, title: "same object" } });
  });
});

/**
 * Where the runtime gives no `ctx.id.name` (an object reached by a bare id, or an alarm set
 * before names were passed), each object goes on under the name it stored. A unique id
 * stands in for such an object: it has no name at all.
 */
describe("an object the runtime gives no name", () => {
  it("a session object serves the session stored in it, under that session's id", async () => {
    const stub = env.SESSION_AGENT.get(env.SESSION_AGENT.newUniqueId());
    const id = unique("stored");
    await runInDurableObject(stub, (_instance, state) => {
      const sql = durableSql(state.storage);
      SessionRuntime.migrate(sql);
      RecordStore.migrate(sql);
      new RecordStore(sql, () => undefined).put(newRecord({ source: "cli", title: "kept", model: "m" }, Date.now(), id));
    });
    await evictDurableObject(stub);
    expect(await stub.describe()).toMatchObject({ ok: true, session: { id, title: "kept" } });
    expect(await stub.enqueue({ content: "still here", target, deliveryKey: "telegram:nameless" })).toEqual({ ok: true, accepted: true });
  });

  it("one with nothing stored finds nothing, and refuses to create a session it could not name", async () => {
    const stub = env.SESSION_AGENT.get(env.SESSION_AGENT.newUniqueId());
    expect(await stub.describe()).toEqual(NOT_FOUND);
    expect(await refusal(stub, (a) => a.create({ source: "cli", model: "m" }))).toMatch(/reached without its name: make its stub with getByName\(\)/);
  });

  it("an Inbox goes on under the session key it stored (its D1 route is the one removed)", async () => {
    const key = unique("agent:main:telegram:group:-1:1");
    const sessionId = unique("bound");
    const origin = { platform: "telegram" as const, chatType: "group" as const, chatId: "-1" };
    const stub = env.INBOX.get(env.INBOX.newUniqueId());
    await runInDurableObject(stub, (_instance, state) => {
      const store = new InboxStore(durableSql(state.storage));
      store.setMeta("key", key);
      store.setBinding({ sessionId, bound: true, origin, updatedAt: Date.now() });
    });
    await routeUpsert(db(env), { sessionKey: key, sessionId, origin, bound: true, updatedAt: Date.now() }).run();
    await evictDurableObject(stub);
    expect(await stub.session()).toBe(sessionId);
    expect(await stub.unbind(sessionId)).toBe(true);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM session_routes WHERE session_key = ?").bind(key).first<{ n: number }>()).toEqual({ n: 0 });
  });

  it("regression: an Inbox restarted by a contact without its name refused every delivery (its key is kept from its first named start)", async () => {
    const key = unique("agent:main:telegram:dm:restarted");
    const named = env.INBOX.getByName(key);
    // Started by name, nothing delivered yet; then every object is reset and this one restarted through a bare id, as
    // settle() does after abortAllDurableObjects(): locally that instance has no name for as long as the runtime lives.
    expect(await named.session()).toBeNull();
    await abortAllDurableObjects();
    await env.INBOX.get(env.INBOX.idFromString(named.id.toString())).idle();
    const again = env.INBOX.getByName(key);
    expect(await runInDurableObject(again, (_instance, state) => state.id.name ?? null)).toBeNull();
    const source = { platform: "telegram" as const, chatType: "dm" as const, chatId: "1", userId: "1" };
    const aside = hiFrom(source);
    expect(await again.take(aside).then((r) => r, failed)).toBe("ignored");
  });

  it("regression: an Inbox named by a key over the runtime's 1024-byte name limit has no ctx.id.name; it keeps its event's key", async () => {
    const source = { platform: "telegram" as const, chatType: "dm" as const, chatId: "9".repeat(1100), userId: "1" };
    const key = buildSessionKey(source);
    const stub = env.INBOX.getByName(key);
    expect(await runInDurableObject(stub, (_instance, state) => state.id.name ?? null)).toBeNull();
    const aside = hiFrom(source);
    expect(await stub.take(aside).then((r) => r, failed)).toBe("ignored");
    expect(await runInDurableObject(stub, (_instance, state) => new InboxStore(durableSql(state.storage)).meta("key"))).toBe(key);
  });
});
