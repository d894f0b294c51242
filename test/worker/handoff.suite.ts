import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { STALE_HANDOFF_ERROR } from "../../durable-objects/session-agent/handoff-state.ts";
import { transcriptProblem, type ChatMessage } from "../../workers/agent/index.ts";
import { app } from "../../workers/app.ts";
import { db } from "../../workers/db/client.ts";
import { setHome } from "../../workers/db/platform-state.ts";
import { HANDOFF_LEASE_MS, runMaintenance } from "../../workers/maintenance.ts";
import { adapterFor } from "../../workers/platforms/registry.ts";
import { buildSessionKey } from "../../workers/platforms/session-key.ts";
import { dc, sl, tg } from "../support/fixtures.ts";
import { SLACK_TEST } from "../support/signing.ts";
import { call, messages, newSession, postTurn, readEvents } from "./helpers.ts";
import { routeOf, sessionFor, settle, toTelegram, until as untilSeen, untilRunning } from "./platform-helpers.ts";
import { discord, llm, slack, telegram } from "./setup.ts";
import { FAKE_GUILD_ID } from "../support/fake-platforms.ts";
import { conversation } from "../support/fake-llm.ts";

const FORUM = "-100777";

async function cliSession(lines: string[], title = "trip planning"): Promise<string> {
  const id = await newSession(title);
  for (const l of lines) await readEvents(await postTurn(id, l));
  return id;
}

async function handoff(id: string, body: Record<string, unknown>) {
  return call(`/v1/sessions/${id}/handoff`, { method: "POST", json: body });
}

/** Waits (long-poll, as the CLI does) until the handoff leaves `state`. */
async function until(id: string, state: string): Promise<Record<string, unknown>> {
  const res = await call(`/v1/sessions/${id}/handoff?wait=30&state=${state}`);
  return ((await res.json()) as { handoff: Record<string, unknown> }).handoff;
}

async function finished(id: string) {
  let h = await until(id, "pending");
  if (h.state === "running") h = await until(id, "running");
  return h;
}

async function parseKey(platform: "telegram" | "discord" | "slack", payload: unknown, form = false): Promise<string> {
  const ingest = adapterFor(env, platform)!.ingest(
    typeof payload === "string" ? payload : JSON.stringify(payload),
    new Headers({ "content-type": form ? "application/x-www-form-urlencoded" : "application/json" }),
  );
  if (ingest.kind !== "event") throw new Error("not an event");
  return buildSessionKey(ingest.event.source);
}

const agent = (id: string) => env.SESSION_AGENT.getByName(id);

describe("handoff requests", () => {
  it("checks platform known, enabled, home channel set, no turn running, nothing in flight, in that order", async () => {
    const id = await newSession();
    const code = async (res: Response) => [res.status, ((await res.json()) as { error?: { code: string } }).error?.code];
    expect(await code(await handoff(id, { platform: "irc" }))).toEqual([400, "unknown_platform"]);
    expect(await code(await handoff("nope", { platform: "telegram" }))).toEqual([404, "not_found"]);
    const disabled = await app.fetch(
      new Request(`http://edge.test/v1/sessions/${id}/handoff`, {
        method: "POST",
        headers: { authorization: "Bearer test-token" },
        body: JSON.stringify({ platform: "telegram" }),
      }),
      { ...env, TELEGRAM_BOT_TOKEN: "" },
    );
    expect(await code(disabled)).toEqual([422, "platform_not_configured"]);
    // Other files share this D1 and may have set one (round-trips.suite.ts does).
    await env.DB.prepare("DELETE FROM home_channels WHERE platform = 'slack'").run();
    expect(await code(await handoff(id, { platform: "slack" }))).toEqual([422, "no_home_channel"]);

    await setHome(db(env), "slack", { chatId: "C5005", threadId: null, chatName: null, setBy: "U1009" });
    llm.hold(["busy "], ["done"]);
    const turn = await postTurn(id, "long");
    const busy = await handoff(id, { platform: "slack" });
    expect(await code(busy)).toEqual([409, "turn_in_progress"]);
    // Stopped, and its stream read to the end: a turn stream cancelled mid-turn made the
    // runtime log "disconnected: abortRead() has been called" for the object's side of it.
    await call(`/v1/sessions/${id}/interrupt`, { method: "POST" });
    expect((await readEvents(turn)).at(-1)).toMatchObject({ event: "done", data: JSON.stringify({ finish_reason: "interrupted" }) });
    llm.reset();

    const other = await newSession();
    llm.hold(["slow summary "], ["x"]);
    expect((await handoff(other, { platform: "slack" })).status).toBe(202);
    expect(await code(await handoff(other, { platform: "slack" }))).toEqual([409, "handoff_in_flight"]);
    // An API turn waits for the handoff too (one rule, in the session's object).
    expect(await code(await postTurn(other, "meanwhile"))).toEqual([409, "handoff_in_flight"]);
    await untilRunning(other);
    await call(`/v1/sessions/${other}/interrupt`, { method: "POST" });
    await finished(other);
  });
});

describe("handoff to Telegram", () => {
  it("opens a forum topic, summarises there, and the topic's next message continues the same session", async () => {
    telegram.forums.add(FORUM);
    await setHome(db(env), "telegram", { chatId: FORUM, threadId: null, chatName: "Forum", setBy: "1007" });
    const id = await cliSession(["plan a trip to Lisbon", "book the hotel near the river"]);
    const res = await handoff(id, { platform: "telegram" });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({
      handoff: {
        state: "pending",
        platform: "telegram",
        to: expect.stringMatching(/^telegram chat -100777, thread: new topic; home set by \/sethome from user 1007 on \d{4}-\d\d-\d\d$/),
      },
    });

    const done = await finished(id);
    const topic = telegram.called("/createForumTopic")[0]!;
    expect(topic.body).toMatchObject({ chat_id: Number(FORUM), name: "Handoff: trip planning" });
    const threadId = String(telegram.calls.find((c) => c.path.endsWith("/sendMessage") && c.body.message_thread_id)!.body.message_thread_id);
    expect(done).toMatchObject({
      state: "completed",
      platform: "telegram",
      error: null,
      destination: { chat_id: FORUM, thread_id: threadId, url: `https://t.me/c/777/${threadId}` },
    });
    expect(typeof done.requested_at).toBe("number");

    // The synthetic turn saw the CLI transcript and the notice, in valid alternation.
    const sent = conversation(llm.calls.at(-1)!.body) as ChatMessage[];
    expect(sent.map((m) => m.content?.slice(0, 20))).toEqual([
      "plan a trip to Lisbo",
      "echo: plan a trip to",
      "book the hotel near ",
      "echo: book the hotel",
      '[This session ("trip',
    ]);
    expect(transcriptProblem(sent)).toBeNull();
    expect(telegram.texts(FORUM).at(-1)).toContain("echo: [This session");

    // A real message in that topic has exactly the key the handoff bound.
    const next = tg.topic("what did we book?", Number(threadId), { userId: 1002, chatId: Number(FORUM) });
    expect(await routeOf(await parseKey("telegram", next))).toBe(id);
    await toTelegram(next);
    await settle();
    expect(conversation(llm.calls.at(-1)!.body).at(0)!.content).toBe("plan a trip to Lisbon");
    expect(telegram.texts(FORUM).at(-1)).toBe("echo: what did we book?");
  });

  it("falls back to the home chat itself when it cannot open a topic", async () => {
    await setHome(db(env), "telegram", { chatId: "1005", threadId: null, chatName: null, setBy: "1005" });
    const id = await cliSession(["hello"]);
    await handoff(id, { platform: "telegram" });
    expect(await finished(id)).toMatchObject({ state: "completed", destination: { chat_id: "1005", thread_id: null } });
    expect(await routeOf("agent:main:telegram:dm:1005")).toBe(id);
  });

  it("ends the session that held the destination key before, with session_switch", async () => {
    await setHome(db(env), "telegram", { chatId: "1006", threadId: null, chatName: null, setBy: "1006" });
    await toTelegram(tg.dm("my own chat", 1006));
    await settle();
    const before = (await routeOf("agent:main:telegram:dm:1006"))!;
    const id = await cliSession(["from the cli"]);
    await handoff(id, { platform: "telegram", thread: false });
    await finished(id);
    const old = ((await (await call(`/v1/sessions/${before}`)).json()) as { session: { end_reason: string } }).session;
    expect(old.end_reason).toBe("session_switch");
  });
});

describe("handoff to Discord and Slack", () => {
  it("Discord: a visible seed message, a thread on it, keyed like an interaction in that thread", async () => {
    await setHome(db(env), "discord", { chatId: "3100", threadId: null, chatName: null, setBy: "2009" });
    const id = await cliSession(["hello discord"], "a very long session title ".repeat(5).trim());
    await handoff(id, { platform: "discord" });
    const done = await finished(id);
    const seed = discord.calls.find((c) => c.path.endsWith("/channels/3100/messages"))!;
    expect(String(seed.body.content)).toContain("handed off");
    const thread = discord.calls.find((c) => c.path.endsWith("/threads"))!;
    expect(String(thread.body.name).length).toBeLessThanOrEqual(80);
    expect(String(thread.body.name).endsWith("...")).toBe(true);
    const threadId = (done.destination as { thread_id: string }).thread_id;
    // Discord's answer to starting the thread names its server: the destination has a link.
    expect((done.destination as { url: string | null }).url).toBe(`https://discord.com/channels/${FAKE_GUILD_ID}/${threadId}`);
    const key = await parseKey("discord", dc.command("ask", { prompt: "next" }, { userId: "2002", thread: { id: threadId, parent: "3100" } }));
    expect(await routeOf(key)).toBe(id);
  });

  it("Slack: a seed message whose ts anchors the thread, keyed like a reply in it", async () => {
    await setHome(db(env), "slack", { chatId: "C4004", threadId: null, chatName: null, setBy: "U1009" });
    const id = await cliSession(["hi slack"]);
    await handoff(id, { platform: "slack" });
    const done = await finished(id);
    const ts = (done.destination as { thread_id: string }).thread_id;
    expect(slack.called("/chat.postMessage").find((c) => c.body.thread_ts === ts && c.body.channel === "C4004")).toBeDefined();
    const key = await parseKey("slack", sl.threadReply("next", ts, "U1002", "C4004"));
    expect(key).toBe(`agent:main:slack:group:${SLACK_TEST.team}:C4004:${ts}`);
    expect(await routeOf(key)).toBe(id);
  });
});

describe("handoff pickup under load", () => {
  it("20 concurrent requests across sessions are each claimed and delivered exactly once, even with concurrent pickups", async () => {
    await setHome(db(env), "telegram", { chatId: "1005", threadId: null, chatName: null, setBy: "1005" });
    const ids = await Promise.all(Array.from({ length: 20 }, (_, i) => newSession(`load test ${i}`)));
    const requests = ids.map((id) => handoff(id, { platform: "telegram", thread: false }));
    // The safety nets racing the objects' own pickups: the cron, and alarms rung early.
    const extra = [runMaintenance(env, Date.now() + 60_000), ...ids.slice(0, 10).map((id) => agent(id).recover()), runMaintenance(env, Date.now() + 60_000)];
    expect((await Promise.all(requests)).map((r) => r.status)).toEqual(ids.map(() => 202));
    await Promise.all(extra);
    const results = await Promise.all(ids.map((id) => finished(id)));
    expect(results.map((r) => r.state)).toEqual(ids.map(() => "completed"));
    // Each summary posted once (later edits of the same message are not new deliveries).
    const posted = telegram
      .called("/sendMessage")
      .filter((c) => String(c.body.chat_id) === "1005")
      .map((c) => String(c.body.text));
    for (let i = 0; i < 20; i++)
      expect(
        posted.filter((t) => t.includes(`("load test ${i}")`)),
        `session ${i}`,
      ).toHaveLength(1);
  });
});

describe("handoff failures", () => {
  it("pickup timeout: the CLI may fail only a handoff still pending; one already claimed is left to its runner", async () => {
    await setHome(db(env), "telegram", { chatId: "1005", threadId: null, chatName: null, setBy: "1005" });
    const id = await cliSession(["hi"]);
    llm.hold(["summing up "], ["the rest"]);
    expect((await handoff(id, { platform: "telegram", thread: false })).status).toBe(202);
    await untilRunning(id);
    const late = await call(`/v1/sessions/${id}/handoff`, { method: "DELETE", json: { reason: "timed out waiting for pickup" } });
    expect(await late.json()).toMatchObject({ failed: false, handoff: { state: "running" } });
    await call(`/v1/sessions/${id}/interrupt`, { method: "POST" });
    expect(await finished(id)).toMatchObject({ state: "completed" });
  });

  it("an object evicted mid-handoff ends failed by the reclaim, never stuck, never delivered twice, and undone", async () => {
    telegram.forums.add(FORUM);
    await setHome(db(env), "telegram", { chatId: FORUM, threadId: null, chatName: null, setBy: "1007" });
    const id = await cliSession(["something"]);
    const held = llm.hold(["summary in progress "], ["never"]);
    await handoff(id, { platform: "telegram" });
    expect(await until(id, "pending")).toMatchObject({ state: "running" });
    // The notice turn runs in the new topic (its first words show there): the topic is bound.
    const inTopic = () => telegram.calls.find((c) => c.path.endsWith("/sendMessage") && String(c.body.chat_id) === FORUM && c.body.message_thread_id);
    await untilSeen(() => inTopic() !== undefined, "the notice turn's first words in the new topic");
    const topicKey = await parseKey("telegram", tg.topic("anyone there?", Number(inTopic()!.body.message_thread_id), { userId: 1002, chatId: Number(FORUM) }));
    expect(await routeOf(topicKey)).toBe(id);
    await abortAllDurableObjects();
    held.abandon(); // its reader went with the objects

    // The cron reclaims it: the woken object fails its own stale job, or the lease does.
    await runMaintenance(env, Date.now() + HANDOFF_LEASE_MS + 1000);
    expect(await until(id, "running")).toMatchObject({ state: "failed", error: STALE_HANDOFF_ERROR });

    // The session's object, woken, drops the handoff's turn instead of delivering it.
    const sentBefore = telegram.texts(FORUM).length;
    await runDurableObjectAlarm(agent(id));
    await agent(id).idle();
    expect(telegram.texts(FORUM).length).toBe(sentBefore);
    // Undone: the notice is not left unanswered in the transcript, and the topic is no longer the session's.
    expect((await messages(id)).map((m) => [m.role, m.content])).toEqual([
      ["user", "something"],
      ["assistant", "echo: something"],
    ]);
    expect(await routeOf(topicKey)).toBeNull();
    expect(await sessionFor(topicKey)).toBeNull();
    // And the session can be handed off again.
    llm.reset();
    expect((await handoff(id, { platform: "telegram" })).status).toBe(202);
    expect(await finished(id)).toMatchObject({ state: "completed" });
  });

  it("a failure at the platform marks the row failed with the reason and leaves the session usable", async () => {
    await setHome(db(env), "telegram", { chatId: "1005", threadId: null, chatName: null, setBy: "1005" });
    for (let i = 0; i < 3; i++) telegram.failNext("/sendMessage", 403, { ok: false, error_code: 403, description: "Forbidden: bot was blocked by the user" });
    const id = await cliSession(["hi"]);
    await handoff(id, { platform: "telegram", thread: false });
    const done = await finished(id);
    expect(done.state).toBe("failed");
    expect(String(done.error)).toContain("bot was blocked");
    expect((await postTurn(id, "still here?")).status).toBe(200);
  });
});
