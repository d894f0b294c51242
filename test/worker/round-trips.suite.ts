/**
 * Issue 12, "One round trip before every 2xx": the remote calls the Worker waits for
 * before it answers each path (see round-trip-trace.ts for how they are counted), and no
 * D1 read before a turn's first token, in the Worker or in the objects.
 */
import { createExecutionContext, evictDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { parseSse } from "../../workers/agent/index.ts";
import { db } from "../../workers/db/client.ts";
import { setHome } from "../../workers/db/platform-state.ts";
import worker from "../../workers/index.ts";
import { adapterFor } from "../../workers/platforms/registry.ts";
import { dc, sl, tg } from "../support/fixtures.ts";
import { newSession, TOKEN } from "./helpers.ts";
import { bind, settle } from "./platform-helpers.ts";
import { countOutboundFetch, discordHook, label, measure, sequentialDepth, slackHook, telegramHook, type Timed } from "./round-trip-trace.ts";
import { notingEnv } from "./reached.ts";
import { net, telegram } from "./setup.ts";

countOutboundFetch();
// The bot's username is learnt once per isolate, after a 2xx; learnt here (the fakes are
// routed by now) so every case below sees the same warm isolate whichever test ran first.
beforeEach(async () => {
  await adapterFor(env, "telegram")!.warm?.();
});

const api = (path: string, json: unknown) =>
  new Request(`http://edge.test${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(json),
  });

/**
 * The D1 reads (SELECTs) prepared while `fn` runs, by anyone in this isolate: the objects'
 * D1 binding is this same object, so wrapping its `prepare` sees their reads too.
 */
async function d1Reads<T>(fn: () => Promise<T>): Promise<{ value: T; reads: string[] }> {
  const reads: string[] = [];
  const own = Object.getOwnPropertyDescriptor(env.DB, "prepare");
  const prepare = env.DB.prepare;
  env.DB.prepare = function (sql: string) {
    if (/^\s*select/i.test(sql)) reads.push(sql);
    return prepare.call(this, sql);
  };
  try {
    return { value: await fn(), reads };
  } finally {
    if (own) Object.defineProperty(env.DB, "prepare", own);
    else delete (env.DB as Partial<D1Database>).prepare;
  }
}

let unique = 0;
const fresh = () => 880_000 + ++unique;

/** Each platform's message from a chat (one per test: a new chat is one the Worker never saw). */
const PLATFORMS: Array<{ name: string; request(chat: number): Promise<Request> }> = [
  { name: "telegram", request: async (chat) => telegramHook(tg.group("hello there", { chatId: -chat, mention: true })) },
  { name: "discord", request: (chat) => discordHook(dc.command("ask", { prompt: "hello there" }, { channelId: String(chat) })) },
  { name: "slack", request: (chat) => slackHook(sl.dm("hello there", "U1001", `D${chat}`)) },
];

/** Sends a request to the Worker as it is (uncounted) and waits for what it left behind. */
async function send(request: Request): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await worker.fetch(request, notingEnv(env), ctx);
  await waitOnExecutionContext(ctx);
  await settle();
  return res;
}

describe("issue 12: one round trip before every 2xx", () => {
  it.each(PLATFORMS)("$name webhook, new chat: one call, to the key's Inbox", async (p) => {
    const m = await measure(await p.request(fresh()));
    expect(m.res.status).toBe(200);
    expect({ depth: m.depth, before: m.before }).toEqual({ depth: 1, before: ["INBOX.take"] });
    await settle();
  });

  it.each(PLATFORMS)("$name webhook, existing session: one call, to the key's Inbox", async (p) => {
    const chat = fresh();
    expect((await send(await p.request(chat))).status).toBe(200);
    const m = await measure(await p.request(chat));
    expect(m.res.status).toBe(200);
    expect({ depth: m.depth, before: m.before }).toEqual({ depth: 1, before: ["INBOX.take"] });
    await settle();
  });

  it("telegram, an isolate that has not learnt the bot's username: still one call; getMe is not waited for", async () => {
    // Another API root is another bot as far as the isolate's username cache goes: a cold one.
    net.route("https://telegram-cold.test", (req) => telegram.handle(req));
    const m = await measure(await PLATFORMS[0]!.request(fresh()), undefined, { TELEGRAM_API_ROOT: "https://telegram-cold.test" });
    expect(m.res.status).toBe(200);
    expect(m.depth).toBe(1);
    expect(m.calls.map(label).sort()).toEqual(["INBOX.take", "fetch https://telegram-cold.test"]);
    await settle();
  });

  it("an unaddressed message in a bound topic: one call", async () => {
    const chatId = -fresh();
    await bind(`agent:main:telegram:group:${chatId}:42`, await newSession());
    const m = await measure(telegramHook(tg.topic("carrying on without a mention", 42, { chatId })));
    expect(m.res.status).toBe(200);
    expect({ depth: m.depth, before: m.before }).toEqual({ depth: 1, before: ["INBOX.take"] });
    await settle();
  });

  it("/stop: one call (the Inbox stops the turn after the answer)", async () => {
    await send(telegramHook(tg.dm("start something", 1002)));
    const m = await measure(telegramHook(tg.command("stop", "", 1002)));
    expect(m.res.status).toBe(200);
    expect({ depth: m.depth, before: m.before }).toEqual({ depth: 1, before: ["INBOX.take"] });
    await settle();
  });

  it("POST /v1/sessions/:id/handoff up to the 202: one call to the session's object, which checks the home channel", async () => {
    const id = await newSession("round trips");
    await setHome(db(env), "slack", { chatId: `C${fresh()}`, threadId: null, chatName: null, setBy: "U1009" });
    const m = await measure(api(`/v1/sessions/${id}/handoff`, { platform: "slack" }));
    expect(m.res.status).toBe(202);
    expect({ depth: m.depth, before: m.before }).toEqual({ depth: 1, before: ["SESSION_AGENT.requestHandoff"] });
    await settle();
  });

  it("a turn on a cold object: one object call and no D1 read (in the Worker or the object) before the first token", async () => {
    const id = await newSession("cold turn");
    const stub = env.SESSION_AGENT.getByName(id);
    await stub.idle();
    await evictDurableObject(stub);
    let rest: Promise<unknown> = Promise.resolve();
    const { value: m, reads } = await d1Reads(() =>
      measure(api(`/v1/sessions/${id}/turns`, { content: "are you awake?" }), async (res) => {
        expect(res.status).toBe(200);
        const events = parseSse(res.body!);
        for (let e = await events.next(); !e.done; e = await events.next()) if (e.value.event === "delta") break;
        rest = (async () => {
          for (let e = await events.next(); !e.done; e = await events.next());
        })();
      }),
    );
    expect({ depth: m.depth, before: m.before, objectReads: reads }).toEqual({ depth: 1, before: ["SESSION_AGENT.startTurn"], objectReads: [] });
    await rest;
    await settle();
  });
});

describe("regression: a new chat's first turn read D1 for the session its Inbox had just made up", () => {
  it("a message from a new chat is answered without any D1 read, in the Worker or an object", async () => {
    const chat = fresh();
    const { value: res, reads } = await d1Reads(async () => send(await PLATFORMS[0]!.request(chat)));
    expect(res.status).toBe(200);
    expect(telegram.texts(-chat).at(-1)).toBe("echo: hello there");
    expect(reads).toEqual([]);
  });
});

describe("sequentialDepth", () => {
  const c = (start: number, end: number | null): Timed => ({ binding: "X", kind: "object", method: "m", start, end });
  it("counts overlapping calls once, a call after another ended twice, and nothing still in flight or over after the answer", () => {
    expect(sequentialDepth([c(1, 4), c(2, 3)], 10)).toBe(1);
    expect(sequentialDepth([c(1, 2), c(3, 4)], 10)).toBe(2);
    expect(sequentialDepth([c(1, 2), c(3, null)], 10)).toBe(1);
    expect(sequentialDepth([c(1, 2), c(3, 11)], 10)).toBe(1);
    expect(sequentialDepth([], 10)).toBe(0);
  });
});
