import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { nodeWebSocket } from "../../cli/gateway/client.ts";
import { REFUSED_HINT } from "../../cli/gateway/client.ts";
import { DISABLED_MESSAGE } from "../../cli/gateway/index.ts";
import { StatusLine } from "../../cli/gateway/status.ts";
import { styleFor } from "../../cli/io.ts";
import { MAX_FRAME_BYTES, encodeFrame } from "../../workers/relay/frames.ts";
import { mintRelayToken, verifyRelayToken } from "../../workers/relay/token.ts";
import { FakeConnector, descriptor, inboundEvent } from "../support/fake-connector.ts";
import { GATEWAY_ID, GATEWAY_SECRET, startGateway } from "../support/gateway-harness.ts";
import { freePort } from "../support/http.ts";
import { ManualClock } from "../support/manual-clock.ts";

const SECRETS = new Map([[GATEWAY_ID, [GATEWAY_SECRET]]]);

function setup(random = () => 0.5) {
  const clock = new ManualClock();
  const connector = new FakeConnector();
  return { clock, connector, random };
}

describe("gateway connection", () => {
  it("dials with a fresh short-lived token, says hello per platform, and logs connector errors", async () => {
    const { clock, connector } = setup();
    const gw = startGateway({ connector, clock, platforms: ["telegram", "discord", "slack"] });
    const s = await connector.socket(1);
    expect(s.url).toBe("wss://edge.test/relay");
    expect(await verifyRelayToken(s.token, SECRETS, clock.now() / 1000)).toMatchObject({ ok: true, gatewayId: GATEWAY_ID, exp: clock.now() / 1000 + 300 });
    await s.handshake(["telegram", "discord"]);
    s.frame({ type: "error", code: "platform_not_relayed", message: "slack is not relayed here" });
    expect(s.sent.filter((f) => f.type === "hello")).toEqual(["telegram", "discord", "slack"].map((platform) => ({ type: "hello", platform, botId: "" })));
    await gw.waitForLog("relay error platform_not_relayed: slack is not relayed here");
    expect(gw.stderr()).toContain("relay: connected (telegram, discord, slack)");
    gw.signals.emit("SIGTERM");
    s.frame({ type: "going_idle_ack" });
    expect(await gw.exit).toBe(0);
    expect(gw.stderr()).not.toContain(GATEWAY_SECRET);
    expect(gw.stderr()).not.toContain(s.token);
  });

  it("reassembles frames split across messages and several in one, skipping malformed lines and unknown types; a frame over 1 MiB drops the socket", async () => {
    const { clock, connector } = setup();
    const gw = startGateway({ connector, clock });
    const s = await connector.socket(1);
    s.open();
    await s.waitFor((f) => f.type === "hello");
    const hs = encodeFrame({ type: "descriptor", descriptor: descriptor("telegram") });
    const one = encodeFrame({ type: "inbound", event: inboundEvent("1", "10", "first"), bufferId: "b1" });
    const two = encodeFrame({ type: "inbound", event: inboundEvent("2", "20", "second"), bufferId: "b2" });
    s.push(hs.slice(0, 25));
    expect(gw.stderr()).not.toContain("connected");
    s.push(`${hs.slice(25)}not json\n{"no":"type"}\n{"type":"from_the_future"}\n${one}${two.slice(0, 40)}`);
    s.push(two.slice(40));
    const acks = await Promise.all([
      s.waitFor((f) => f.type === "inbound_ack" && f.bufferId === "b1"),
      s.waitFor((f) => f.type === "inbound_ack" && f.bufferId === "b2"),
    ]);
    expect(acks).toHaveLength(2);
    await s.waitFor((f) => f.type === "outbound" && (f.action as { final?: boolean }).final === true, 2);
    expect(gw.stderr()).toContain("relay: skipped 2 malformed lines");
    s.push(`{"type":"inbound","pad":"${"x".repeat(MAX_FRAME_BYTES)}`);
    expect(s.closedByGateway).toEqual({ code: 1000, reason: "frame too large" });
    await gw.waitForLog("reconnecting in");
    gw.signals.emit("SIGINT");
    expect(await gw.exit).toBe(0);
  });

  it("re-dials with jittered backoff 1 s doubling, reset only after a connection that stayed up a minute", async () => {
    const { clock, connector } = setup();
    const gw = startGateway({ connector, clock, random: () => 0 });
    const waits: number[] = [];
    let n = 1;
    const drop = async (upForMs: number | null) => {
      const s = await connector.socket(n++);
      if (upForMs !== null) {
        await s.handshake();
        clock.advance(upForMs);
      }
      s.closeFromServer(1006);
      const [wait] = clock.pending();
      waits.push(wait!);
      clock.advance(wait!);
    };
    for (let i = 0; i < 3; i++) await drop(null);
    await drop(10_000); // up, but not for long: the ladder keeps climbing
    await drop(60_000);
    await drop(null);
    expect(waits).toEqual([500, 1000, 2000, 4000, 500, 1000]);
    await gw.waitForLog("reconnecting in 0.5s (connection lost (1006))");
    gw.signals.emit("SIGTERM");
    expect(await gw.exit).toBe(0);
  });

  it("retries a 4401 before any handshake with backoff, and re-dials after 4401 expired", async () => {
    const { clock, connector } = setup();
    const gw = startGateway({ connector, clock });
    for (let i = 1; i <= 3; i++) {
      (await connector.socket(i)).closeFromServer(4401, "bad_signature");
      clock.advance(clock.pending()[0]!);
    }
    const s4 = await connector.socket(4);
    await s4.handshake();
    s4.closeFromServer(4401, "expired");
    expect(clock.pending()).toHaveLength(1); // an ordinary backoff wait, not the immediate re-dial
    clock.advance(clock.pending()[0]!);
    (await connector.socket(5)).closeFromServer(4401, "expired");
    clock.advance(clock.pending()[0]!);
    await connector.socket(6);
    expect(gw.stderr()).toContain("reconnecting in 0.8s (credentials refused (4401))");
    // The retries come with what to check, said once, not a bare retry forever.
    expect(gw.stderr().split(REFUSED_HINT)).toHaveLength(2);
    expect(REFUSED_HINT).toContain("GATEWAY_RELAY_ID and GATEWAY_RELAY_SECRET match an <id>:<secret> pair in the Worker's RELAY_SECRETS");
    expect(gw.stderr()).toContain("(token expired (4401))");
    expect(gw.stderr()).not.toContain("disabled");
    gw.signals.emit("SIGTERM");
    expect(await gw.exit).toBe(0);
  });

  it("after a handshake, answers a 4401 with one immediate re-dial on a fresh token, then disables (exit 1)", async () => {
    const { clock, connector } = setup();
    const minted: string[] = [];
    const mintToken = async (id: string, secret: string, exp: number) => {
      const t = await mintRelayToken(id, secret, exp);
      minted.push(t);
      return t;
    };
    const gw = startGateway({ connector, clock, mintToken });
    const s1 = await connector.socket(1);
    await s1.handshake();
    clock.advance(5_000);
    s1.closeFromServer(4401, "revoked");
    expect(clock.pending()).toEqual([]);
    const s2 = await connector.socket(2);
    expect(minted).toEqual([s1.token, s2.token]);
    expect(s2.token).not.toBe(s1.token);
    expect(await verifyRelayToken(s2.token, SECRETS, clock.now() / 1000)).toMatchObject({ ok: true, exp: clock.now() / 1000 + 300 });
    s2.closeFromServer(4401, "revoked");
    expect(await gw.exit).toBe(1);
    expect(connector.sockets).toHaveLength(2);
    expect(gw.stderr()).toContain("relay: disabled");
    expect(gw.stderr()).toContain(DISABLED_MESSAGE);
  });

  it("keeps retrying, loudly, when another connection is live or took over (regression: a replayed token made the real gateway exit for good)", async () => {
    const { clock, connector } = setup();
    const gw = startGateway({ connector, clock });
    const s = await connector.socket(1);
    await s.handshake();
    s.closeFromServer(4409, "replaced");
    expect(clock.pending()).toHaveLength(1);
    clock.advance(clock.pending()[0]!);
    (await connector.socket(2)).closeFromServer(4409, "busy");
    clock.advance(clock.pending()[0]!);
    const s3 = await connector.socket(3);
    await s3.handshake();
    expect(gw.stderr()).toContain("WARNING another connection of this gateway took over (4409 replaced)");
    expect(gw.stderr()).toContain("WARNING another connection of this gateway is live (4409 busy)");
    gw.signals.emit("SIGTERM");
    s3.frame({ type: "going_idle_ack" });
    expect(await gw.exit).toBe(0);
  });

  it("mints a distinct token for every dial, retries a replayed one, and pings while connected", async () => {
    const { clock, connector } = setup();
    const gw = startGateway({ connector, clock });
    const s1 = await connector.socket(1);
    await s1.handshake();
    // A refusal right after a handshake, within the same second: the re-dial's token differs.
    s1.closeFromServer(4401, "replayed");
    clock.advance(clock.pending()[0]!);
    const s2 = await connector.socket(2);
    expect(s2.token).not.toBe(s1.token);
    await s2.handshake();
    expect(gw.stderr()).toContain("4401 replayed");
    expect(gw.stderr()).not.toContain("disabled");
    expect(s2.sent.filter((f) => f.type === "ping")).toHaveLength(0);
    clock.advance(10_000);
    clock.advance(10_000);
    expect(s2.sent.filter((f) => f.type === "ping")).toHaveLength(2);
    gw.signals.emit("SIGTERM");
    s2.frame({ type: "going_idle_ack" });
    expect(await gw.exit).toBe(0);
  });

  it("reports a refused dial of the real WebSocket as a close (regression: Node 22 fires only error)", async () => {
    const port = await freePort();
    const socket = nodeWebSocket(`ws://127.0.0.1:${port}/relay`, { headers: { authorization: "Bearer x" } });
    const events: string[] = [];
    const closed = new Promise<void>((resolve) => {
      socket.onerror = () => void events.push("error");
      socket.onclose = (ev) => {
        events.push(`close ${ev.code}`);
        resolve();
      };
    });
    await closed;
    expect(events).toEqual(["error", "close 1006"]);
  });

  it("rewrites the status line in place on a terminal and prints plain lines otherwise", () => {
    const render = (isTTY: boolean) => {
      const out = Object.assign(new PassThrough(), { isTTY });
      let text = "";
      out.on("data", (d: Buffer) => (text += d.toString()));
      const line = new StatusLine(out, styleFor({ isTTY: false }, {}));
      line.status({ state: "connected", platforms: ["slack"] });
      line.log("slack chat C1: 2 chars in, 5 chars out");
      line.status({ state: "reconnecting", inMs: 1500, reason: "connection lost (1006)" });
      line.end();
      return text;
    };
    expect(render(false)).toBe("relay: connected (slack)\nslack chat C1: 2 chars in, 5 chars out\nrelay: reconnecting in 1.5s (connection lost (1006))\n");
    expect(render(true)).toBe(
      "\r\x1b[2Krelay: connected (slack)\r\x1b[2Kslack chat C1: 2 chars in, 5 chars out\nrelay: connected (slack)\r\x1b[2Krelay: reconnecting in 1.5s (connection lost (1006))\n",
    );
  });
});
