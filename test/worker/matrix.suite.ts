import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ENCRYPTED_NOTE } from "../../workers/platforms/matrix/index.ts";
import { loadCorpus } from "../support/corpus.ts";
import { mx } from "../support/matrix-fixtures.ts";
import { MATRIX_TEST, matrixHeaders } from "../support/signing.ts";
import { routeOf, sessionFor, settle, toMatrix } from "./platform-helpers.ts";
import { homeserver, llm } from "./setup.ts";

const BOT = MATRIX_TEST.bot;
const ALICE = "@alice:example.org";
let txn = 0;
const nextTxn = () => `t${Date.now()}-${++txn}`;
const put = (body: string, id = nextTxn(), headers = matrixHeaders()) => toMatrix(`/_matrix/app/v1/transactions/${id}`, body, headers);
const dm = (room = `!dm${++txn}:example.org`) => (homeserver.room(room, [ALICE, BOT]), room);

describe("Matrix: the application service's routes", () => {
  it("refuses a missing, wrong, padded or doubled hs_token with 403 M_FORBIDDEN before reading the body", async () => {
    const room = dm();
    const body = mx.txn([mx.message(room, ALICE, "hi")]);
    const t = MATRIX_TEST.hsToken;
    const cases: Array<{ headers: Record<string, string>; query?: string }> = [
      { headers: { "content-type": "application/json" } },
      { headers: { authorization: `Bearer ${t}x` } },
      { headers: { authorization: `Bearer ${t.slice(0, -1)}` } },
      { headers: { authorization: `Basic ${t}` } },
      { headers: { authorization: `Bearer  ${t}` } },
      { headers: { authorization: "Bearer" } },
      // Both given: both must be the token.
      { headers: matrixHeaders(), query: "access_token=wrong" },
      { headers: matrixHeaders("wrong"), query: `access_token=${t}` },
      { headers: {}, query: `access_token=${t}&access_token=${t}` },
      { headers: {}, query: "access_token=" },
    ];
    for (const c of cases) {
      const res = await toMatrix(`/_matrix/app/v1/transactions/${nextTxn()}${c.query ? `?${c.query}` : ""}`, body, c.headers);
      expect(res.status, JSON.stringify(c)).toBe(403);
      expect(await res.json()).toMatchObject({ errcode: "M_FORBIDDEN" });
    }
    // Not even the body is read: a body that is not JSON is refused the same.
    expect((await toMatrix("/_matrix/app/v1/transactions/x", "{not json", { authorization: "Bearer nope" })).status).toBe(403);
    await settle();
    expect(llm.calls).toEqual([]);
    expect(homeserver.sent()).toEqual([]);
  });

  it("takes the legacy ?access_token= and the legacy /transactions/{txnId} route", async () => {
    const room = dm();
    const res = await toMatrix(`/transactions/${nextTxn()}?access_token=${MATRIX_TEST.hsToken}`, mx.txn([mx.message(room, ALICE, "legacy")]), {
      "content-type": "application/json",
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    await settle();
    expect(homeserver.texts().at(-1)).toBe("echo: legacy");
  });

  it("answers the ping {}, unknown routes 404 M_UNRECOGNIZED, a known route with another method 405", async () => {
    const ping = await toMatrix("/_matrix/app/v1/ping", JSON.stringify({ transaction_id: "mautrix-go_1683636478256400935_123" }), matrixHeaders(), "POST");
    expect(ping.status).toBe(200);
    expect(await ping.json()).toEqual({});
    for (const path of [
      "/_matrix/app/v1/users/@x:example.org",
      "/_matrix/app/v1/thirdparty/protocol/irc",
      "/_matrix/app/v1/transactions/a/b",
      "/_matrix/app/v1/transactions/",
    ]) {
      const res = await toMatrix(path, "{}", matrixHeaders(), "GET");
      expect(res.status, path).toBe(404);
      expect(await res.json()).toMatchObject({ errcode: "M_UNRECOGNIZED" });
    }
    expect((await toMatrix(`/_matrix/app/v1/transactions/${nextTxn()}`, "{}", matrixHeaders(), "POST")).status).toBe(405);
    // A platform that serves no paths below its webhook URL has none.
    const below = await exports.default.fetch("http://edge.test/webhooks/telegram/_matrix/app/v1/ping", {
      method: "POST",
      headers: matrixHeaders(),
      body: "{}",
    });
    expect(below.status).toBe(404);
    expect((await toMatrix("/_matrix/app/v1/ping", "{}", matrixHeaders(), "GET")).status).toBe(405);
  });

  it("answers empty transactions, ephemeral-only ones (both keys), state events and bodies that do not parse 200 {} with no turn", async () => {
    const room = dm();
    const receipt = { type: "m.receipt", room_id: room, content: {} };
    const member = { type: "m.room.member", event_id: "$m1", room_id: room, sender: ALICE, state_key: ALICE, content: { membership: "join" } };
    const topic = { type: "m.room.topic", event_id: "$m2", room_id: room, sender: ALICE, state_key: "", content: { topic: "hi" } };
    for (const body of [
      mx.txn([]),
      mx.txn([], { ephemeral: [receipt], "de.sorunome.msc2409.ephemeral": [receipt] }),
      mx.txn([member, topic]),
      JSON.stringify({ events: [{ type: 7 }, null, "x", { type: "m.room.message", content: null }] }),
      "{not json",
      "[]",
    ]) {
      const res = await put(body);
      expect(res.status, body).toBe(200);
      expect(await res.json()).toEqual({});
    }
    await settle();
    expect(llm.calls).toEqual([]);
  });
});

describe("Matrix: transaction size", () => {
  it("takes a transaction over the 1 MiB webhook cap (100 events of 20 KB, as Synapse batches them), and refuses one over 8 MiB", async () => {
    const room = dm();
    const big = mx.txn(Array.from({ length: 100 }, (_, i) => mx.message(room, ALICE, `${i} ${"x".repeat(20_000)}`, { msgtype: "m.notice" })));
    expect(big.length).toBeGreaterThan(2_000_000);
    const res = await put(big);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    expect((await put(`{"events":[],"pad":"${"y".repeat(9 * 1024 * 1024)}"}`)).status).toBe(413);
  });
});

describe("Matrix: events", () => {
  it("answers a DM as the bot with HTML and a plain body, replying to it, keyed agent:main:matrix:dm:<room>", async () => {
    const room = dm();
    const event = mx.message(room, ALICE, "hi **matrix**");
    expect((await put(mx.txn([event]))).status).toBe(200);
    await settle();
    const sent = homeserver.sent().at(-1);
    expect(sent?.path).toContain(`/rooms/${encodeURIComponent(room)}/send/m.room.message/`);
    expect(sent?.path).toContain(`user_id=${encodeURIComponent(BOT)}`);
    expect(sent?.body).toMatchObject({
      msgtype: "m.text",
      body: "echo: hi matrix",
      formatted_body: "echo: hi <strong>matrix</strong>",
      "m.relates_to": { "m.in_reply_to": { event_id: event.event_id } },
    });
    expect(homeserver.called(`/typing/${encodeURIComponent(BOT)}`).length + homeserver.calls.filter((c) => c.path.includes("/typing/")).length).toBeGreaterThan(
      0,
    );
    expect(await routeOf(`agent:main:matrix:dm:${room}`)).not.toBeNull();
  });

  it("takes a retried txnId as a no-op, and an event seen under another txnId once", async () => {
    const room = dm();
    const body = mx.txn([mx.message(room, ALICE, "once")]);
    const id = nextTxn();
    for (const t of [id, id, nextTxn()]) expect((await put(body, t)).status).toBe(200);
    // A txnId done is not read again at all (here with other events, which a homeserver never sends).
    expect((await put(mx.txn([mx.message(room, ALICE, "not read")]), id)).status).toBe(200);
    await settle();
    expect(llm.calls).toHaveLength(1);
    expect(homeserver.texts()).toEqual(["echo: once"]);
  });

  it("in a room of more than two, answers mentions (m.mentions or a pill) and commands, not other talk", async () => {
    const room = "!group:example.org";
    homeserver.room(room, [ALICE, "@bob:example.org", "@carol:example.org", BOT]);
    const pill = mx.message(room, ALICE, "ignored", { extra: {} });
    (pill.content as Record<string, unknown>).body = "Hermes: via pill";
    Object.assign(pill.content as object, {
      format: "org.matrix.custom.html",
      formatted_body: '<a href="https://matrix.to/#/%40hermes%3Aexample.org">Hermes</a>: via pill',
    });
    await put(mx.txn([mx.message(room, ALICE, "just chatting"), mx.message(room, ALICE, "with mentions", { mention: true }), pill]));
    await settle();
    expect(homeserver.texts().sort()).toEqual(["echo: via pill", "echo: with mentions"]);
  });

  it("ignores edits, notices, reactions, redactions and the bot's own messages", async () => {
    const room = dm();
    const edit = mx.message(room, ALICE, " * fixed", {
      extra: { "m.new_content": { msgtype: "m.text", body: "fixed" }, "m.relates_to": { rel_type: "m.replace", event_id: "$x" } },
    });
    const reaction = {
      type: "m.reaction",
      event_id: "$r1",
      room_id: room,
      sender: ALICE,
      content: { "m.relates_to": { rel_type: "m.annotation", event_id: "$x", key: "👍️" } },
    };
    const redaction = { type: "m.room.redaction", event_id: "$d1", room_id: room, sender: ALICE, redacts: "$x", content: {} };
    await put(mx.txn([edit, mx.message(room, ALICE, "bot talk", { msgtype: "m.notice" }), reaction, redaction, mx.message(room, BOT, "me")]));
    await settle();
    expect(llm.calls).toEqual([]);
    expect(homeserver.sent()).toEqual([]);
  });

  it("strips a reply's fallback quote from the text the model reads", async () => {
    const room = dm();
    const reply = mx.message(room, ALICE, "> <@bob:example.org> earlier words\n\nthe real question", {
      extra: { "m.relates_to": { "m.in_reply_to": { event_id: "$earlier" } } },
    });
    await put(mx.txn([reply]));
    await settle();
    expect(homeserver.texts()).toEqual(["echo: the real question"]);
  });

  it("joins an allowed user's invite, declines anyone else's, and notes an encrypted room once", async () => {
    const open = "!invited:example.org";
    const other = "!spam:example.org";
    homeserver.room(open, [ALICE]);
    homeserver.room(other, ["@mallory:example.org"]);
    await put(mx.txn([mx.invite(open, ALICE), mx.invite(other, "@mallory:example.org")]));
    expect(homeserver.calls.some((c) => c.path.startsWith(`/_matrix/client/v3/join/${encodeURIComponent(open)}`))).toBe(true);
    expect(homeserver.calls.some((c) => c.path.startsWith(`/_matrix/client/v3/rooms/${encodeURIComponent(other)}/leave`))).toBe(true);
    await put(mx.txn([mx.encrypted(open, ALICE), mx.encrypted(open, ALICE)]));
    await put(mx.txn([mx.encrypted(open, ALICE)]));
    await settle();
    expect(homeserver.texts()).toEqual([ENCRYPTED_NOTE]);
    expect(llm.calls).toEqual([]);
  });

  it("honours a 429's retry_after_ms: the reply waits that long (kept by the session), then goes out once", async () => {
    const room = dm();
    const limited = { errcode: "M_LIMIT_EXCEEDED", error: "Too many requests", retry_after_ms: 60_000 };
    // Every send refused for now: the live update and the final delivery.
    for (let i = 0; i < 3; i++) homeserver.failNext("/send/m.room.message/", 429, limited);
    const before = Date.now();
    await put(mx.txn([mx.message(room, ALICE, "slow down")]));
    const sessionId = (await sessionFor(`agent:main:matrix:dm:${room}`)) ?? "";
    const agent = env.SESSION_AGENT.getByName(sessionId);
    await agent.idle();
    const pending = () => runInDurableObject(agent, (_i, state) => state.storage.sql.exec("SELECT text, not_before FROM deliveries").toArray());
    const [held] = await pending();
    expect(held?.text).toBe("echo: slow down");
    expect(Number(held?.not_before)).toBeGreaterThanOrEqual(before + 60_000);
    expect(homeserver.replies()).toEqual([]);
    // Not before the wait is over; then once.
    expect(await runDurableObjectAlarm(agent)).toBe(true);
    expect(homeserver.replies()).toEqual([]);
    homeserver.reset();
    homeserver.room(room, [ALICE, BOT]);
    await runInDurableObject(agent, (_i, state) => void state.storage.sql.exec("UPDATE deliveries SET not_before = not_before - 60000"));
    expect(await runDurableObjectAlarm(agent)).toBe(true);
    expect(homeserver.replies()).toEqual(["echo: slow down"]);
    expect(await pending()).toEqual([]);
  });
});

describe("Matrix: the corpus, replayed as transactions", () => {
  it.each(
    loadCorpus()
      .filter((e) => e.platform === "matrix")
      .map((e) => [`${e.name} (${e.expect})`, e] as const),
  )("%s", async (_, e) => {
    // A room of its own per file (what the Worker learns of a room is kept a while), and fresh event ids: the spec's examples share theirs.
    const bot = typeof e.bot?.user_id === "string" ? e.bot.user_id : BOT;
    const own = (s: string) =>
      s
        .replace(/!([A-Za-z0-9]+):([a-z.]+)/g, `!$1-${e.name}:$2`)
        .replaceAll("$143273582443PhrS", `$${Date.now()}${++txn}`)
        .replaceAll(bot, BOT)
        .replaceAll("@metavlad:matrix.org", "@example:example.org");
    const direct = typeof e.bot?.direct_room === "string" ? own(e.bot.direct_room) : null;
    const body = own(JSON.stringify(e.payload));
    const events = (JSON.parse(body) as { events: Array<{ room_id?: string }> }).events;
    const rooms = new Set<string>(events.map((x) => x.room_id ?? "").filter(Boolean));
    homeserver.media.set("example.org/JWEIFJgwEIhweiWJE", { bytes: new TextEncoder().encode("not really a jpeg"), type: "image/jpeg" });
    for (const r of rooms) homeserver.room(r, r === direct ? ["@example:example.org", BOT] : ["@example:example.org", "@x:example.org", "@y:example.org", BOT]);
    const id = nextTxn();
    for (const t of [id, id]) {
      const res = await put(body, t);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({});
    }
    await settle();
    const texts = homeserver.replies();
    if (e.name === "image")
      expect(homeserver.calls.some((c) => c.path.startsWith("/_matrix/client/v1/media/download/example.org/JWEIFJgwEIhweiWJE"))).toBe(true);
    // A thread reply not mentioning the bot is answered only in a thread handed to it (test/e2e/matrix.e2e.ts: a CLI session handed off into a thread, continued there without a mention).
    if (e.expect === "reply" && e.name !== "thread-reply") expect(texts, "one reply").toHaveLength(1);
    if (e.expect === "silence" || e.name === "thread-reply") expect(texts).toEqual([]);
    if (e.expect === "answer") expect(texts).toEqual([ENCRYPTED_NOTE]);
  });
});
