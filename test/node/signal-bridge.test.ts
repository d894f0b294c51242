import { afterEach, describe, expect, it } from "vitest";
import { SignalBridge } from "../../cli/gateway/signal/bridge.ts";
import { readEvents, SignalCli } from "../../cli/gateway/signal/cli.ts";
import { BridgeLocal } from "../../cli/gateway/signal/store.ts";
import { GatewayStore } from "../../cli/gateway/store.ts";
import { checkUploadLink } from "../../workers/relay/media.ts";
import { RELAYABLE } from "../../workers/platforms/names.ts";
import type { GatewayFrameIn } from "../../workers/relay/frames.ts";
import { FakeSignalCli } from "../support/fake-signal-cli.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { SIGNAL_TEST, sig } from "../support/signal-fixtures.ts";

/** The bridge of `hermes-edge gateway --bridge signal` against the fake daemon, in process: a link that records frames. */
function setup(opts: { upload?: (req: Request) => Promise<Response> } = {}) {
  const daemon = new FakeSignalCli(SIGNAL_TEST.account, SIGNAL_TEST.botUuid);
  const clock = new ManualClock();
  const store = GatewayStore.open(":memory:");
  const frames: GatewayFrameIn[] = [];
  const link = { connected: true, send: (f: GatewayFrameIn) => (link.connected ? (frames.push(f), true) : false) };
  const lines: string[] = [];
  const cli = new SignalCli({
    url: "http://signal-cli.test",
    account: SIGNAL_TEST.account,
    fetch: async (input, init) => daemon.handle(new Request(input, init)),
    clock,
    random: () => 0.5,
    log: (l) => lines.push(l),
  });
  let n = 0;
  const upload = opts.upload
    ? {
        origin: "https://edge.test",
        gatewayId: "home",
        secret: "gw-secret",
        fetch: (async (i, init) => opts.upload!(new Request(i, init))) as typeof fetch,
        now: () => clock.now(),
      }
    : undefined;
  const bridge = new SignalBridge({
    cli,
    local: new BridgeLocal(store.sql),
    link,
    clock,
    log: (l) => lines.push(l),
    newId: () => `item-${++n}`,
    ...(upload ? { upload } : {}),
  });
  const of = <T extends GatewayFrameIn["type"]>(type: T) => frames.filter((f): f is Extract<GatewayFrameIn, { type: T }> => f.type === type);
  const tick = async () => {
    for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r));
  };
  return { daemon, clock, store, frames, link, bridge, of, tick, lines };
}

let stop: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const s of stop.splice(0)) await s();
});

function started(opts: Parameters<typeof setup>[0] = {}) {
  const t = setup(opts);
  t.bridge.start();
  stop.push(async () => {
    await t.bridge.stop();
    t.store.close();
  });
  return t;
}

describe("hermes-edge gateway --bridge signal", () => {
  it("sends each received item up as bridge_inbound, wrapped with the bot's identity, and keeps it until the Worker acks it", async () => {
    const t = started();
    await t.daemon.waitFor(() => t.daemon.streams === 1);
    await t.tick();
    const item = sig.dm(SIGNAL_TEST.alice.uuid, "hello from signal");
    t.daemon.deliver(item);
    await t.tick();
    const [up] = t.of("bridge_inbound");
    expect(up).toMatchObject({ platform: "signal", id: "item-1" });
    expect(JSON.parse(up!.body)).toEqual({ received: item, self: { number: SIGNAL_TEST.account, uuid: SIGNAL_TEST.botUuid } });
    // Not acked: a new connection gets it again, in order with the later ones.
    t.daemon.deliver(sig.dm(SIGNAL_TEST.alice.uuid, "second"));
    await t.tick();
    t.frames.length = 0;
    t.bridge.connected();
    expect(t.of("bridge_inbound").map((f) => f.id)).toEqual(["item-1", "item-2"]);
    t.bridge.acked("item-1");
    t.frames.length = 0;
    t.bridge.connected();
    expect(t.of("bridge_inbound").map((f) => f.id)).toEqual(["item-2"]);
  });

  it("keeps what arrives while the relay socket is down and sends it, in order, once it is back", async () => {
    const t = started();
    await t.daemon.waitFor(() => t.daemon.streams === 1);
    t.link.connected = false;
    t.daemon.deliver(sig.dm(SIGNAL_TEST.alice.uuid, "while away 1"));
    t.daemon.deliver(sig.dm(SIGNAL_TEST.bob.uuid, "while away 2"));
    await t.tick();
    expect(t.of("bridge_inbound")).toEqual([]);
    t.link.connected = true;
    t.bridge.connected();
    expect(t.of("bridge_inbound").map((f) => JSON.parse(f.body).received.envelope.dataMessage.message)).toEqual(["while away 1", "while away 2"]);
  });

  it("runs each action once, in order, on signal-cli (with the account), and reports its timestamp; a repeat is answered from the record", async () => {
    const t = started();
    await t.tick();
    const send = { method: "send" as const, params: { recipient: [SIGNAL_TEST.alice.uuid], message: "hi", textStyle: ["0:2:BOLD"] } };
    t.bridge.action("a1", send);
    t.bridge.action("a2", { method: "sendTyping", params: { recipient: [SIGNAL_TEST.alice.uuid] } });
    t.bridge.action("a1", send);
    await t.tick();
    const results = t.of("bridge_result");
    expect(results.map((r) => r.actionId)).toEqual(["a1", "a2", "a1"]);
    expect(results[0]!.result).toMatchObject({ success: true, timestamp: expect.any(Number) });
    expect(results[2]!.result).toEqual(results[0]!.result);
    expect(t.daemon.sends()).toHaveLength(1);
    expect(t.daemon.sends()[0]!.params).toEqual({ ...send.params, account: SIGNAL_TEST.account });
  });

  it("reports a refusal with its code; a rate limit is not remembered, so the Worker's retry runs again", async () => {
    const t = started();
    await t.tick();
    const send = { method: "send" as const, params: { recipient: [SIGNAL_TEST.alice.uuid], message: "hi" } };
    t.daemon.failNext("send", -32603, "Failed to send message: RateLimitException (413)");
    t.bridge.action("r1", send);
    t.daemon.failNext("send", -32603, "Failed to send message: UnregisteredUserException");
    t.bridge.action("r2", send);
    await t.tick();
    expect(t.of("bridge_result").map((r) => [r.actionId, r.result.code])).toEqual([
      ["r1", "rate_limited"],
      ["r2", "not_found"],
    ]);
    t.bridge.action("r1", send);
    await t.tick();
    expect(t.of("bridge_result").at(-1)).toMatchObject({ actionId: "r1", result: { success: true } });
  });

  it("follows the stream again with backoff after it drops; what came meanwhile waited in signal-cli and arrives", async () => {
    const t = started();
    await t.daemon.waitFor(() => t.daemon.streams === 1);
    await t.tick();
    t.daemon.dropStreams();
    await t.tick();
    expect(t.lines.some((l) => /event stream down .*reconnecting in/.test(l))).toBe(true);
    t.daemon.deliver(sig.dm(SIGNAL_TEST.alice.uuid, "sent while the stream was down"));
    expect(t.daemon.queued).toHaveLength(1);
    await t.clock.advanceSettling(1_000);
    await t.daemon.waitFor(() => t.daemon.streams === 1);
    await t.tick();
    expect(t.of("bridge_inbound").map((f) => JSON.parse(f.body).received.envelope.dataMessage.message)).toEqual(["sent while the stream was down"]);
  });

  it("puts each received file to the Worker through a link signed for that one key, and names the keys in the item", async () => {
    const puts: Request[] = [];
    const t = started({
      upload: async (req) => {
        puts.push(req);
        return req.url.includes("too-big") ? new Response(null, { status: 413 }) : Response.json({}, { status: 201 });
      },
    });
    await t.tick();
    t.daemon.attachments.set("att-1", new Uint8Array([1, 2, 3]));
    const item = sig.dm(SIGNAL_TEST.alice.uuid, "look");
    (item.envelope.dataMessage as Record<string, unknown>).attachments = [
      { contentType: "image/png", id: "att-1", size: 3 },
      { contentType: "text/x-signal-plain", id: "long-text", size: 3000 },
      { contentType: "image/png", id: "gone", size: 3 },
    ];
    t.daemon.deliver(item);
    // Three signal-cli calls and an upload come first: wait for the item itself, not a number of turns of the loop.
    while (t.of("bridge_inbound").length === 0) await t.tick();
    const [up] = t.of("bridge_inbound");
    const files = JSON.parse(up!.body).files as Record<string, string>;
    expect(Object.keys(files)).toEqual(["att-1"]);
    expect(files["att-1"]).toMatch(/^relay\/home\/bridged\/[0-9a-f-]{36}$/);
    expect(puts).toHaveLength(1);
    const url = new URL(puts[0]!.url);
    expect(url.pathname).toBe(`/relay/upload/${files["att-1"]}`);
    expect(
      await checkUploadLink(files["att-1"]!, url.searchParams.get("exp"), url.searchParams.get("sig"), ["gw-secret"], Math.floor(t.clock.now() / 1000)),
    ).toEqual({ ok: true });
    expect(new Uint8Array(await puts[0]!.arrayBuffer())).toEqual(new Uint8Array([1, 2, 3]));
    expect(t.lines.some((l) => l.includes("attachment gone could not be read"))).toBe(true);
  });

  it("tells the Worker whether signal-cli answers (bridge_status)", async () => {
    const t = started();
    await t.tick();
    expect(t.of("bridge_status").at(-1)).toMatchObject({ platform: "signal", reachable: true });
    t.daemon.down = true;
    await t.clock.advanceSettling(30_000);
    await t.tick();
    expect(t.of("bridge_status").at(-1)).toMatchObject({ reachable: false, detail: expect.stringContaining("503") });
  });
});

describe("reading signal-cli's server-sent events", () => {
  it("takes `receive` events' data, skips keep-alive comments and other events, and joins data split over lines and chunks", async () => {
    const enc = new TextEncoder();
    const chunks = [':\n\nevent:receive\ndata:{"a":', '1}\n\n:keepalive\n\nevent:other\ndata:x\n\nevent: receive\r\ndata: {"b":2}\r\n\r\n'];
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        for (const x of chunks) c.enqueue(enc.encode(x));
        c.close();
      },
    });
    const got: string[] = [];
    await readEvents(body, (d) => got.push(d));
    expect(got).toEqual(['{"a":1}', '{"b":2}']);
  });
});

describe("hermes-edge gateway --bridge settings", () => {
  const base = { GATEWAY_RELAY_URL: "https://edge.example", GATEWAY_RELAY_ID: "home", GATEWAY_RELAY_SECRET: "s" };

  it("bridges Signal with SIGNAL_ACCOUNT and SIGNAL_CLI_URL (default loopback 8080), and relays nothing unless --platforms says so", async () => {
    const { readGatewayConfig } = await import("../../cli/gateway/config.ts");
    const got = readGatewayConfig({ ...base, SIGNAL_ACCOUNT: "+15550009999" }, { bridge: "signal" }, "/tmp");
    expect(got).toMatchObject({ ok: true, config: { platforms: [], bridge: { signal: { url: "http://127.0.0.1:8080", account: "+15550009999" } } } });
    const both = readGatewayConfig(
      { ...base, SIGNAL_ACCOUNT: "+15550009999", SIGNAL_CLI_URL: "http://10.0.0.5:9000/" },
      { bridge: "signal", platforms: "telegram" },
      "/tmp",
    );
    expect(both).toMatchObject({ ok: true, config: { platforms: ["telegram"], bridge: { signal: { url: "http://10.0.0.5:9000" } } } });
  });

  it("says what is missing or wrong, and that Signal is bridged, not relayed", async () => {
    const { readGatewayConfig } = await import("../../cli/gateway/config.ts");
    expect(readGatewayConfig(base, { bridge: "signal" }, "/tmp")).toMatchObject({ ok: false, error: expect.stringContaining("SIGNAL_ACCOUNT") });
    expect(readGatewayConfig({ ...base, SIGNAL_ACCOUNT: "+15550009999" }, { bridge: "matrix" }, "/tmp")).toMatchObject({
      ok: false,
      error: expect.stringContaining("--bridge"),
    });
    expect(readGatewayConfig(base, { platforms: "signal" }, "/tmp")).toMatchObject({ ok: false, error: expect.stringContaining("--bridge signal") });
    expect(readGatewayConfig(base, {}, "/tmp")).toMatchObject({ ok: true, config: { platforms: [...RELAYABLE] } });
    expect(RELAYABLE).not.toContain("signal");
  });
});
