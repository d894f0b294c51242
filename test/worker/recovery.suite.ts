import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { SEEN_RETENTION_MS } from "../../workers/runtime/seen.ts";
import { runMaintenance, STUCK_TURN_MS } from "../../workers/maintenance.ts";
import { TURN_STREAM_LOST } from "../../workers/http/turn-stream.ts";
import { RESTART_FAILURE } from "../../workers/runtime/index.ts";
import { messages, newSession, openTurn, session } from "./helpers.ts";
import { sessionFor, settle, toTelegram } from "./platform-helpers.ts";
import { llm, telegram } from "./setup.ts";
import { tg } from "../support/fixtures.ts";
import { conversation } from "../support/fake-llm.ts";

/**
 * Starts an API turn whose reply holds after its first words, then kills every object, as
 * a crash or deploy would mid-turn. The caller's stream ends with an `error` event saying so.
 */
async function dieMidTurn(id: string, content: string): Promise<void> {
  llm.hold(["half "], ["never"]);
  const turn = await openTurn(id, content);
  expect(await turn.next()).toMatchObject({ event: "delta" });
  await abortAllDurableObjects();
  expect(await turn.rest()).toEqual([{ event: "error", data: JSON.stringify(TURN_STREAM_LOST) }]);
}

const agent = (id: string) => env.SESSION_AGENT.getByName(id);

describe("an accepted turn survives the object restarting mid-turn", () => {
  it("regression: the caller's stream broke without a last event (an uncaught exception in the log): it ends with session_restarted", async () => {
    llm.hold(["half "], ["never"]);
    const turn = await openTurn(await newSession(), "cut short");
    expect(await turn.next()).toEqual({ event: "delta", data: JSON.stringify({ text: "half " }) });
    await abortAllDurableObjects();
    expect(await turn.rest()).toEqual([{ event: "error", data: JSON.stringify(TURN_STREAM_LOST) }]);
  });

  it("runs the turn again once, from the stored input", async () => {
    const id = await newSession();
    await dieMidTurn(id, "remember me");
    expect(await session(id)).toMatchObject({ running: true });

    expect(await runDurableObjectAlarm(agent(id))).toBe(true);
    expect(await messages(id)).toMatchObject([
      { role: "user", content: "remember me" },
      { role: "assistant", content: "echo: remember me", finish_reason: "stop" },
    ]);
    expect(await session(id)).toMatchObject({ running: false });
    // The re-run asked the model with the stored user message, once.
    expect(conversation(llm.calls.at(-1)!.body).map((m) => m.content)).toEqual(["remember me"]);
  });

  it("records a visible failure instead of running it a third time", async () => {
    const id = await newSession();
    await dieMidTurn(id, "doomed");
    // As if the one re-run had also died: its attempt stored, then the instance gone (the
    // next one reads the turn from storage; a live instance keeps its turns in memory).
    await runInDurableObject(agent(id), (_instance, state) => {
      state.storage.sql.exec("UPDATE turns SET attempts = 2");
    });
    await abortAllDurableObjects();
    const callsBefore = llm.calls.length;
    expect(await runDurableObjectAlarm(agent(id))).toBe(true);
    expect(llm.calls.length).toBe(callsBefore);
    expect(await messages(id)).toMatchObject([
      { role: "user", content: "doomed" },
      { role: "assistant", content: RESTART_FAILURE, finish_reason: "error" },
    ]);
    expect(await session(id)).toMatchObject({ running: false });
    expect(await runDurableObjectAlarm(agent(id))).toBe(false);
  });
});

describe("cron safety net", () => {
  it("wakes a session whose turn has been stuck for two watchdog periods and recovers it", async () => {
    const id = await newSession();
    await dieMidTurn(id, "are you there");
    // As if the watchdog alarm had been lost with the instance, after the running flag
    // reached D1 (it goes with the first write of the turn).
    const startedAt = Date.now();
    await runInDurableObject(agent(id), async (_i, state) => {
      await state.storage.deleteAlarm();
    });
    await env.DB.prepare("UPDATE sessions SET active_turn_id = 'x', turn_started_at = ? WHERE id = ?").bind(startedAt, id).run();

    expect(await runMaintenance(env, startedAt + 1000)).toMatchObject({ woken: 0 });
    expect(await runMaintenance(env, startedAt + STUCK_TURN_MS + 1)).toMatchObject({ woken: 1 });
    expect(await messages(id)).toMatchObject([
      { role: "user", content: "are you there" },
      { role: "assistant", content: "echo: are you there" },
    ]);
    expect(await session(id)).toMatchObject({ running: false });
  });

  it("remembers a delivery id for the retention window, then forgets it", async () => {
    const update = tg.group("once", { userId: 1004, chatId: -100901, mention: true });
    await toTelegram(update);
    await settle();
    const key = "agent:main:telegram:group:-100901:1004";
    const inbox = env.INBOX.getByName(key);
    const age = (ms: number) =>
      runInDurableObject(inbox, (_i, state) => {
        state.storage.sql.exec("UPDATE seen SET at = at - ?", ms);
      });
    await age(SEEN_RETENTION_MS - 60_000);
    expect(
      await inbox.take({
        kind: "message",
        deliveryId: String(update.update_id),
        messageId: "1",
        text: "once",
        attachments: [],
        addressed: true,
        bindsThread: false,
        source: { platform: "telegram", chatType: "group", chatId: "-100901", userId: "1004" },
        target: { platform: "telegram", private: false, ref: "{}" },
      }),
    ).toBe("duplicate");
    await age(120_000);
    // Any later delivery prunes the old ids.
    await toTelegram(tg.group("later", { userId: 1004, chatId: -100901, mention: true }));
    await settle();
    const left = await runInDurableObject(
      inbox,
      (_i, state) => state.storage.sql.exec("SELECT COUNT(*) AS n FROM seen WHERE delivery_key = ?", `telegram:${update.update_id}`).one().n,
    );
    expect(left).toBe(0);
  });
});

describe("a stuck turn is recovered on the session's next contact", () => {
  it("even with no alarm and no D1 marker left behind", async () => {
    const id = await newSession();
    await dieMidTurn(id, "first words");
    await runInDurableObject(agent(id), async (_i, state) => {
      await state.storage.deleteAlarm();
    });
    await abortAllDurableObjects();
    // Any call wakes a new instance, which sees the unfinished turn and schedules recovery.
    expect(await agent(id).status()).toMatchObject({ running: true });
    expect(await runDurableObjectAlarm(agent(id))).toBe(true);
    expect((await messages(id)).map((m) => m.content)).toEqual(["first words", "echo: first words"]);
  });
});

describe("an accepted platform message survives the object restarting", () => {
  it("is answered in its chat after the restart", async () => {
    llm.hold(["half "], ["never"]);
    expect((await toTelegram(tg.dm("survive this", 1004))).status).toBe(200);
    const sessionId = (await sessionFor("agent:main:telegram:dm:1004"))!;
    await abortAllDurableObjects();
    expect(await runDurableObjectAlarm(agent(sessionId))).toBe(true);
    expect(telegram.texts(1004).at(-1)).toBe("echo: survive this");
    expect((await messages(sessionId)).map((m) => m.content)).toEqual(["survive this", "echo: survive this"]);
  });
});

describe("regression: a newer message overtook the turn a dead instance left", () => {
  it("runs the interrupted turn again first, then the newer message, in order", async () => {
    llm.hold(["half "], ["never"]);
    await toTelegram(tg.dm("first, interrupted by a restart", 1004));
    const sessionId = (await sessionFor("agent:main:telegram:dm:1004"))!;
    await abortAllDurableObjects();
    await toTelegram(tg.dm("second, sent after", 1004));
    await settle();
    const texts = telegram.texts(1004).filter((t) => t.startsWith("echo:"));
    expect(texts.slice(-2)).toEqual(["echo: first, interrupted by a restart", "echo: second, sent after"]);
    const contents = (await messages(sessionId)).map((m) => m.content);
    expect(contents.slice(-4)).toEqual([
      "first, interrupted by a restart",
      "echo: first, interrupted by a restart",
      "second, sent after",
      "echo: second, sent after",
    ]);
  });
});

describe("regression: a final reply waiting on a 429 was lost with its object", () => {
  it("is kept through abortAllDurableObjects, waits out retry_after, and the next instance delivers it", async () => {
    const gate = llm.hold(["first words "], ["and the rest"]);
    telegram.failNext("/editMessageText", 429, {
      ok: false,
      error_code: 429,
      description: "Too Many Requests: retry after 60",
      parameters: { retry_after: 60 },
    });
    await toTelegram(tg.dm("slow platform", 1004));
    const sessionId = (await sessionFor("agent:main:telegram:dm:1004"))!;
    for (let i = 0; i < 1000 && !telegram.texts(1004).includes("first words"); i++) await agent(sessionId).status();
    gate.release();
    await agent(sessionId).idle();
    // Refused once; a minute to wait is left to the object's alarm, with the reply stored.
    const pending = () =>
      runInDurableObject(agent(sessionId), (_i, state) => state.storage.sql.exec("SELECT text, attempts, not_before FROM deliveries").toArray());
    expect(await pending()).toEqual([{ text: "first words and the rest", attempts: 1, not_before: expect.any(Number) }]);
    // The chat still shows the first words: the one edit carrying the rest was refused.
    expect(telegram.called("/sendMessage").at(-1)!.body.text).toBe("first words");
    expect(telegram.called("/editMessageText")).toHaveLength(1);

    await abortAllDurableObjects();
    // The new instance honours the wait it inherited: nothing is sent before retry_after.
    expect(await runDurableObjectAlarm(agent(sessionId))).toBe(true);
    expect(telegram.called("/editMessageText")).toHaveLength(1);
    await runInDurableObject(agent(sessionId), (_i, state) => void state.storage.sql.exec("UPDATE deliveries SET not_before = not_before - 60000"));
    expect(await runDurableObjectAlarm(agent(sessionId))).toBe(true);
    expect(telegram.called("/editMessageText").map((c) => c.body.text)).toEqual(["first words and the rest", "first words and the rest"]);
    expect(await pending()).toEqual([]);
    expect((await messages(sessionId)).map((m) => m.content).slice(-2)).toEqual(["slow platform", "first words and the rest"]);
  });
});

describe("regression: every delivery left two alarms that woke idle objects", () => {
  it("a message answered and copied leaves no alarm in its Inbox (its hand-on retry) nor in its session object (the turn's watchdog)", async () => {
    const chatId = 7_901;
    const key = `agent:main:telegram:dm:${chatId}`;
    await toTelegram(tg.dm("nothing left to watch", 1001, { chat: { id: chatId, type: "private", first_name: "u" } }));
    await settle();
    const id = await sessionFor(key);
    expect(id).not.toBeNull();
    expect(await messages(id!)).toMatchObject([{ role: "user" }, { role: "assistant" }]);
    const alarms = (stub: DurableObjectStub) => runInDurableObject(stub, (_i, state) => state.storage.getAlarm());
    expect(await alarms(env.INBOX.getByName(key))).toBeNull();
    expect(await alarms(agent(id!))).toBeNull();
  });
});
