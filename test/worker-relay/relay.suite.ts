import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env, selfFetch } from "../worker/config.ts";
import { describe, expect, it } from "vitest";
import { MAX_TOKEN_LIFETIME_S } from "../../workers/relay/token.ts";
import { tg } from "../support/fixtures.ts";
import { call, newSession, postTurn, readEvents } from "../worker/helpers.ts";
import { bind, settle, toTelegram } from "../worker/platform-helpers.ts";
import { llm, telegram } from "../worker/setup.ts";
import { connect, gateway, GW, token } from "./helpers.ts";

const relayStub = () => env.RELAY.getByName(GW.id);
const text = (f: Record<string, unknown>) => (f.event as { text: string }).text;
const inbound = (t: string) => (f: Record<string, unknown>) => f.type === "inbound" && text(f) === t;

describe("relay auth", () => {
  it("closes with 4401 for a missing, forged, unknown or malformed token; 4401 'expired' for an expired one", async () => {
    const now = () => Math.floor(Date.now() / 1000);
    // Each token is minted as its case connects, and the lifetime case is well over the limit:
    // minted first with 601 s, it had 600 s left (valid) whenever the clock crossed a second
    // before its turn, and the test waited for a close that never came (the exact boundary is
    // test/node/verify.test.ts's, on an injected clock).
    const cases: Array<[() => Promise<string | null>, string]> = [
      [async () => null, "unauthorized"],
      [() => token({ secret: "wrong" }), "unauthorized"],
      [() => token({ id: "gw9", secret: "whatever" }), "unauthorized"],
      [async () => "not-a-token", "unauthorized"],
      [() => token({ exp: now() - 1 }), "expired"],
      // Tokens must be short-lived (regression: a captured never-expiring token worked forever).
      [() => token({ exp: 0 }), "token must expire"],
      [() => token({ exp: now() + MAX_TOKEN_LIFETIME_S + 60 }), "token lifetime over 10 minutes"],
    ];
    for (const [bearer, reason] of cases) {
      const s = await connect(await bearer());
      expect(await s.closed).toEqual({ code: 4401, reason });
    }
  });

  it("accepts any configured secret of the gateway (rotation)", async () => {
    for (const t of [await token({ secret: GW.rotated }), await token()]) {
      const s = await connect(t);
      s.send({ type: "hello", platform: "telegram", botId: "" });
      expect(await s.next("descriptor")).toMatchObject({
        descriptor: {
          platform: "telegram",
          max_message_length: 4096,
          len_unit: "utf16",
          supported_ops: ["send", "edit", "typing", "thread_create"],
          daily_token_budget: 50000,
        },
      });
      s.ws.close(1000);
    }
  });

  it("answers 426 to a plain GET", async () => {
    expect((await selfFetch("http://edge.test/relay")).status).toBe(426);
  });
});

describe("relay frames", () => {
  it("parses frames split across messages and several in one; skips malformed lines; ignores unknown types", async () => {
    const s = await connect(await token());
    const hello = JSON.stringify({ type: "hello", platform: "telegram", botId: "" });
    s.raw(hello.slice(0, 10));
    s.raw(`${hello.slice(10)}\nnot json at all\n{"type":"mystery"}\n[1,2]\n`);
    expect(await s.next("descriptor")).toMatchObject({ type: "descriptor" });
    s.send({ type: "hello", platform: "discord", botId: "" });
    expect(await s.next("error")).toMatchObject({ code: "platform_not_relayed" });
    s.ws.close(1000);
  });

  it("closes with 1009 on a frame over 1 MiB", async () => {
    const s = await gateway();
    s.raw(`{"type":"hello","pad":"${"x".repeat(1024 * 1024)}"}`);
    expect((await s.closed).code).toBe(1009);
  });

  it("answers an unknown op with success:false and a code, and runs send through the adapter", async () => {
    const s = await gateway();
    s.send({ type: "outbound", requestId: "r1", platform: "telegram", action: { op: "explode", chat_id: "1001" } });
    expect(await s.next("outbound_result")).toMatchObject({ requestId: "r1", result: { success: false, code: "unsupported_op" } });
    s.send({ type: "outbound", requestId: "r2", platform: "telegram", action: { op: "send", chat_id: "1001", content: "hi from the gateway" } });
    const sent = await s.next("outbound_result");
    expect(sent).toMatchObject({ requestId: "r2", result: { success: true, message_id: expect.any(String) } });
    expect(telegram.texts(1001)).toContain("hi from the gateway");
    s.ws.close(1000);
  });
});

describe("relay delivery", () => {
  it("delivers a verified Telegram message with a bufferId instead of running it at the edge", async () => {
    const s = await gateway();
    expect((await toTelegram(tg.dm("for the gateway", 1001))).status).toBe(200);
    const f = await s.next("inbound");
    expect(f).toMatchObject({
      bufferId: expect.any(String),
      event: {
        text: "for the gateway",
        session_key: "agent:main:telegram:dm:1001",
        source: { platform: "telegram", chat_id: "1001", chat_type: "dm", user_id: "1001" },
      },
    });
    await settle();
    expect(llm.calls).toHaveLength(0);
    s.send({ type: "inbound_ack", bufferId: f.bufferId });
    s.ws.close(1000);
  });

  it("a redelivery after the gateway acknowledged is not relayed again (regression: a gateway that lost its database answered twice)", async () => {
    const s = await gateway();
    const update = tg.dm("once only", 1001);
    await toTelegram(update);
    const f = await s.next(inbound("once only"));
    s.send({ type: "inbound_ack", bufferId: f.bufferId });
    expect((await toTelegram(update)).status).toBe(200);
    // A later message proves the socket is live and the redelivery was not sent before it.
    await toTelegram(tg.dm("next one", 1001));
    const g = await s.next(inbound("next one"));
    expect(s.frames.filter(inbound("once only"))).toHaveLength(1);
    s.send({ type: "inbound_ack", bufferId: g.bufferId });
    s.ws.close(1000);
  });

  it("keeps frames for a gateway that is away and replays unacked ones in order on every handshake", async () => {
    for (const t of ["one", "two", "three"]) await toTelegram(tg.dm(t, 1002));
    const first = await gateway();
    const got = [await first.next("inbound"), await first.next("inbound"), await first.next("inbound")];
    expect(got.map((f) => (f.event as { text: string }).text)).toEqual(["one", "two", "three"]);
    first.send({ type: "inbound_ack", bufferId: got[0]!.bufferId });
    first.ws.close(1000);
    await first.closed;
    const second = await gateway();
    const again = [await second.next("inbound"), await second.next("inbound")];
    expect(again.map((f) => (f.event as { text: string }).text)).toEqual(["two", "three"]);
    expect(again.map((f) => f.bufferId)).toEqual([got[1]!.bufferId, got[2]!.bufferId]);
    for (const f of again) second.send({ type: "inbound_ack", bufferId: f.bufferId });
    second.ws.close(1000);
    expect((await relayStub().status()).buffered).toBe(0);
  });

  it("a captured token cannot be replayed (regression: a replayed token took over the gateway)", async () => {
    const t = await token();
    const real = await connect(t);
    real.send({ type: "hello", platform: "telegram", botId: "" });
    await real.next("descriptor");
    const thief = await connect(t);
    expect(await thief.closed).toEqual({ code: 4401, reason: "replayed" });
    await toTelegram(tg.dm("still mine", 1001));
    const f = await real.next(inbound("still mine"));
    real.send({ type: "inbound_ack", bufferId: f.bufferId });
    real.ws.close(1000);
  });

  it("a newcomer is refused 4409 while the current socket is live, and takes over once it went silent", async () => {
    const a = await gateway();
    const refused = await connect(await token());
    expect(await refused.closed).toEqual({ code: 4409, reason: "busy" });
    // The current socket has not been heard from for longer than the liveness window.
    await runInDurableObject(relayStub(), (_obj, state) => {
      for (const ws of state.getWebSockets()) ws.serializeAttachment({ ...(ws.deserializeAttachment() as object), lastFrameAt: Date.now() - 60_000 });
    });
    const b = await gateway();
    expect(await a.closed).toEqual({ code: 4409, reason: "replaced" });
    await toTelegram(tg.dm("after the race", 1001));
    const f = await b.next(inbound("after the race"));
    expect(a.frames.filter((x) => x.type === "inbound")).toHaveLength(0);
    b.send({ type: "inbound_ack", bufferId: f.bufferId });
    b.ws.close(1000);
  });

  it("still routes to its sockets after the object hibernates between frames", async () => {
    const s = await gateway();
    await evictDurableObject(relayStub());
    await toTelegram(tg.dm("after hibernation", 1001));
    const f = await s.next(inbound("after hibernation"));
    s.send({ type: "inbound_ack", bufferId: f.bufferId });
    s.send({ type: "outbound", requestId: "r9", platform: "telegram", action: { op: "typing", chat_id: "1001" } });
    expect(await s.next("outbound_result")).toMatchObject({ requestId: "r9", result: { success: true } });
    s.ws.close(1000);
  });

  it("going_idle switches to buffered-only until the next handshake", async () => {
    const s = await gateway();
    s.send({ type: "going_idle" });
    await s.next("going_idle_ack");
    const before = s.frames.length;
    await toTelegram(tg.dm("while idle", 1001));
    expect(s.frames.slice(before).filter((f) => f.type === "inbound")).toHaveLength(0);
    s.send({ type: "hello", platform: "telegram", botId: "" });
    const f = await s.next(inbound("while idle"));
    s.send({ type: "inbound_ack", bufferId: f.bufferId });
    s.ws.close(1000);
  });

  it("bounds the buffer, dropping the oldest and counting what it dropped", async () => {
    for (let i = 0; i < 7; i++) await toTelegram(tg.dm(`flood ${i}`, 1001));
    const status = await relayStub().status();
    expect(status.buffered).toBe(5);
    expect(status.dropped).toBeGreaterThanOrEqual(2);
    const s = await gateway();
    const first = await s.next("inbound");
    expect((first.event as { text: string }).text).toBe("flood 2");
    const res = await call("/v1/relay");
    expect(((await res.json()) as { gateways: Array<{ id: string; dropped: number }> }).gateways.find((g) => g.id === GW.id)!.dropped).toBe(status.dropped);
    s.ws.close(1000);
  });
});

describe("relay interrupts", () => {
  it("/stop in a group reaches the gateway for exactly the sender's session key", async () => {
    const s = await gateway();
    await toTelegram(tg.group("task for alice", { mention: true, userId: 1001, chatId: -100500 }));
    await toTelegram(tg.group("task for bob", { mention: true, userId: 1002, chatId: -100500 }));
    await s.next("inbound");
    await s.next("inbound");
    const stop = tg.group("/stop", { userId: 1001, chatId: -100500 });
    (stop.message as Record<string, unknown>).entities = [{ type: "bot_command", offset: 0, length: 5 }];
    await toTelegram(stop);
    const f = await s.next("interrupt_inbound");
    expect(f).toEqual({ type: "interrupt_inbound", session_key: "agent:main:telegram:group:-100500:1001", chat_id: "-100500" });
    expect(s.frames.filter((x) => x.type === "interrupt_inbound")).toHaveLength(1);
    for (const x of s.frames.filter((y) => y.type === "inbound")) s.send({ type: "inbound_ack", bufferId: x.bufferId });
    s.ws.close(1000);
  });

  it("the gateway's interrupt cancels a turn the edge runs for a key of its platform, and nothing else", async () => {
    const s = await gateway();
    const other = await connect(await token({ id: "gw2", secret: "other-secret" }));
    const id = await newSession();
    await bind("agent:main:telegram:dm:4242", id);
    const cli = await newSession();
    await bind("agent:main:cli:dm:tester", cli);
    llm.hold(["edge turn "], ["never"]);
    const res = await postTurn(id, "long edge job");
    // Not this gateway's platform, and not this gateway: both ignored.
    s.send({ type: "interrupt", session_key: "agent:main:cli:dm:tester", reason: "x" });
    other.send({ type: "interrupt", session_key: "agent:main:telegram:dm:4242", reason: "x" });
    // Frames on a socket are handled in order: once these answers arrive, the interrupts were handled.
    s.send({ type: "outbound", requestId: "sync", platform: "telegram", action: { op: "noop", chat_id: "1" } });
    other.send({ type: "hello", platform: "telegram", botId: "" });
    await s.next("outbound_result");
    await other.next("error");
    expect(((await (await call(`/v1/sessions/${id}`)).json()) as { session: { running: boolean } }).session.running).toBe(true);
    s.send({ type: "interrupt", session_key: "agent:main:telegram:dm:4242", reason: "gateway stop" });
    const events = await readEvents(res);
    expect(events.at(-1)).toMatchObject({ event: "done", data: JSON.stringify({ finish_reason: "interrupted" }) });
    s.ws.close(1000);
    other.ws.close(1000);
  });

  it("a gateway cannot claim a platform assigned to another one", async () => {
    const other = await connect(await token({ id: "gw2", secret: "other-secret" }));
    other.send({ type: "hello", platform: "telegram", botId: "" });
    expect(await other.next("error")).toMatchObject({ code: "platform_not_relayed" });
    expect(other.frames.some((f) => f.type === "descriptor")).toBe(false);
    other.ws.close(1000);
  });
});
