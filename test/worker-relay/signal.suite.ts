import { env, selfFetch } from "../worker/config.ts";
import { describe, expect, it } from "vitest";
import { imagesOf, lastUserText } from "../support/fake-llm.ts";
import { dataUrl, PNG } from "../support/files.ts";
import { SIGNAL_TEST, sig } from "../support/signal-fixtures.ts";
import { uploadKey, uploadLink } from "../../workers/relay/media.ts";
import { call } from "../worker/helpers.ts";
import { settle } from "../worker/platform-helpers.ts";
import { llm } from "../worker/setup.ts";
import { connect, token, type Frame, type TestSocket } from "./helpers.ts";

/** BRIDGE_PLATFORMS=signal:gw3 (vitest.config.ts): gw3 bridges Signal, the edge runs its turns. */
const GW3 = { id: "gw3", secret: "signal-secret" };
const { alice, bob } = SIGNAL_TEST;

async function bridge(): Promise<TestSocket> {
  const s = await connect(await token(GW3));
  s.send({ type: "hello", platform: "signal", botId: "" });
  expect(await s.next("descriptor")).toMatchObject({ descriptor: { platform: "signal", bridged: true, max_message_length: 2000, supports_edit: true } });
  return s;
}

let items = 0;
/** Sends a received item up (with the keys of files uploaded for it) and waits for its ack (the edge stored it). */
async function up(s: TestSocket, received: unknown, files?: Record<string, string>): Promise<void> {
  const id = `item-${++items}`;
  s.send({ type: "bridge_inbound", platform: "signal", id, body: sig.bridged(received, files) });
  await s.next((f) => f.type === "bridge_inbound_ack" && f.id === id);
}

type Call = { method: string; params: Record<string, unknown> };
const callOf = (f: Frame) => f.call as Call;

/**
 * Runs every action the Relay sends down, as signal-cli would, until none comes for a while:
 * each `send` gets the next timestamp. Returns the calls in order.
 */
async function runActions(s: TestSocket, until: (calls: Call[]) => boolean, ts = { n: 1_765_200_000_000 }): Promise<Call[]> {
  const calls: Call[] = [];
  while (!until(calls)) {
    const f = await s.next("bridge_action");
    const call = callOf(f);
    calls.push(call);
    s.send({ type: "bridge_result", actionId: f.actionId, result: call.method === "send" ? { success: true, timestamp: ++ts.n } : { success: true } });
  }
  return calls;
}

const sends = (calls: Call[]) => calls.filter((c) => c.method === "send");
const finalText = (calls: Call[]) => String(sends(calls).at(-1)?.params.message);

async function waitingActions(): Promise<number> {
  return (await env.RELAY.getByName(GW3.id).bridgeState("signal")).waiting;
}

/** Confirms whatever earlier tests left waiting for gw3, until nothing is. */
async function drain(s: TestSocket): Promise<void> {
  while ((await waitingActions()) > 0) {
    const f = await s.next("bridge_action");
    s.send({ type: "bridge_result", actionId: f.actionId, result: { success: true, timestamp: Date.now() } });
    s.send({ type: "ping" });
    await s.next("pong");
  }
}

async function close(s: TestSocket): Promise<void> {
  s.ws.close(1000);
  await s.closed;
}

describe("BRIDGE_PLATFORMS=signal: a message bridged by the gateway is answered at the edge", () => {
  it("acks the item once stored, runs the turn at the edge, and sends the reply down as signal-cli calls (read receipt, typing, send, edits by the latest timestamp)", async () => {
    const s = await bridge();
    const turns = llm.calls.length;
    const gate = llm.hold(["first words "], ["and the rest"]);
    await up(s, sig.dm(alice.uuid, "hello from signal"));
    const ts = { n: 1_765_200_000_000 };
    const live = await runActions(s, (c) => sends(c).length === 1, ts);
    expect(live.find((c) => c.method === "sendReceipt")?.params).toMatchObject({ recipient: alice.uuid, type: "read" });
    expect(sends(live)[0]!.params).toMatchObject({ recipient: [alice.uuid], message: "first words" });
    expect(sends(live)[0]!.params.editTimestamp).toBeUndefined();
    gate.release();
    const rest = await runActions(s, (c) => finalText(c) === "first words and the rest", ts);
    await settle();
    expect(llm.calls.length).toBe(turns + 1);
    // Each edit names the timestamp the previous send or edit got (Signal clients drop an edit of an older one).
    const edits = sends(rest);
    expect(edits.length).toBeGreaterThan(0);
    edits.forEach((e, i) => expect(e.params.editTimestamp).toBe(1_765_200_000_001 + i));
    expect(await waitingActions()).toBe(0);
    await close(s);
  });

  it("takes a redelivered item (same sender and timestamp) once", async () => {
    const s = await bridge();
    const item = sig.dm(alice.uuid, "only once please");
    await up(s, item);
    await runActions(s, (c) => finalText(c) === "echo: only once please");
    const turns = llm.calls.length;
    await up(s, item);
    await settle();
    expect(llm.calls.length).toBe(turns);
    await close(s);
  });

  it("allows a user listed by number though the UUID keys them, and refuses one on no list (once, with a note)", async () => {
    const s = await bridge();
    await up(s, sig.dm(bob.uuid, "bob by number"));
    const calls = await runActions(s, (c) => finalText(c) === "echo: bob by number");
    expect(sends(calls)[0]!.params.recipient).toEqual([bob.uuid]);
    const stranger = "3c333333-3333-4333-8333-333333333333";
    const turns = llm.calls.length;
    await up(s, sig.dm(stranger, "let me in"));
    const refusal = await runActions(s, (c) => sends(c).length === 1);
    expect(finalText(refusal)).toContain("SIGNAL_ALLOWED_USERS");
    expect(llm.calls.length).toBe(turns);
    await close(s);
  });

  it("in a group, answers only a message that mentions the bot, in a session of that user in that group", async () => {
    const s = await bridge();
    const turns = llm.calls.length;
    await up(s, sig.group(alice.uuid, SIGNAL_TEST.group, "just chatting", { mention: false }));
    await settle();
    expect(llm.calls.length).toBe(turns);
    await up(s, sig.group(alice.uuid, SIGNAL_TEST.group, "what time is it?"));
    const calls = await runActions(s, (c) => finalText(c) === "echo: what time is it?");
    // The first part quotes the message it answers (groups), and goes to the group.
    expect(sends(calls)[0]!.params).toMatchObject({ groupId: SIGNAL_TEST.group, quoteAuthor: alice.uuid });
    await close(s);
  });

  it("keeps the reply's actions, in order, while the gateway is away (the turn does not wait), and sends them when it is back", async () => {
    const turns = llm.calls.length;
    const s = await bridge();
    await up(s, sig.dm(alice.uuid, "answer me later"));
    await close(s);
    await settle();
    expect(llm.calls.length).toBe(turns + 1);
    expect(await waitingActions()).toBeGreaterThan(0);
    const back = await bridge();
    const calls = await runActions(back, (c) => finalText(c) === "echo: answer me later");
    // Typing is never kept for a gateway that was away; the text went out whole.
    expect(calls.some((c) => c.method === "sendTyping")).toBe(false);
    expect(await waitingActions()).toBe(0);
    await close(back);
  });

  it("answers /stop at the edge (the turns run here), and /whoami with the sender's UUID", async () => {
    const s = await bridge();
    await up(s, sig.dm(alice.uuid, "/whoami"));
    const calls = await runActions(s, (c) => sends(c).length === 1);
    expect(finalText(calls)).toContain(alice.uuid);
    await close(s);
  });

  it("refuses a bridged item from a gateway that does not bridge Signal", async () => {
    const other = await connect(await token({ id: "gw2", secret: "other-secret" }));
    other.send({ type: "hello", platform: "signal", botId: "" });
    expect(await other.next("error")).toMatchObject({ code: "platform_not_relayed" });
    other.send({ type: "bridge_inbound", platform: "signal", id: "x", body: sig.bridged(sig.dm(alice.uuid, "forged")) });
    expect(await other.next("error")).toMatchObject({ code: "platform_not_bridged" });
    await close(other);
  });

  it("reads a photo the gateway uploaded through its signed link as the platform's attachment (an image part for the model)", async () => {
    const key = uploadKey(GW3.id, "photo-1");
    const put = async (link: string, bytes: Uint8Array) =>
      selfFetch(link, { method: "PUT", headers: { "content-type": "image/png", "content-length": String(bytes.byteLength) }, body: bytes });
    const exp = Math.floor(Date.now() / 1000) + 120;
    // A link signed with another gateway's secret, or for another key, puts nothing.
    expect((await put(await uploadLink("http://edge.test", key, "other-secret", exp), PNG)).status).toBe(401);
    expect((await put(await uploadLink("http://edge.test", uploadKey("gw1", "x"), "s3cret-a", exp), PNG)).status).toBe(404);
    expect((await put(await uploadLink("http://edge.test", key, GW3.secret, exp), PNG)).status).toBe(201);
    const s = await bridge();
    const photo = sig.dm(alice.uuid, "what is this?");
    const attachments = [{ contentType: "image/png", filename: "p.png", id: "att-1", size: PNG.byteLength }];
    (photo.envelope.dataMessage as Record<string, unknown>).attachments = attachments;
    await up(s, photo, { "att-1": key });
    await runActions(s, (c) => finalText(c).startsWith("echo: what is this?"));
    const call = llm.calls.find((c) => lastUserText(c.body).startsWith("what is this?"))!;
    expect(imagesOf(call.body.messages.at(-1)!.content)).toEqual([dataUrl("image/png", PNG)]);
    await close(s);
  });

  it("refuses an upload over ATTACHMENT_MAX_BYTES, or one without a length, before keeping anything", async () => {
    const key = uploadKey(GW3.id, "big-1");
    const link = await uploadLink("http://edge.test", key, GW3.secret, Math.floor(Date.now() / 1000) + 120);
    const big = await selfFetch(link, { method: "PUT", headers: { "content-length": String(11 * 1024 * 1024) }, body: new Uint8Array(16) });
    expect(big.status).toBe(413);
    expect(await env.FILES.head(key)).toBeNull();
  });

  it("shows the bridge in /v1/status and /v1/relay: the gateway connected, signal-cli reachable or not, actions waiting", async () => {
    const s = await bridge();
    await drain(s);
    s.send({ type: "bridge_status", platform: "signal", reachable: false, detail: "connection refused" });
    s.send({ type: "ping" });
    await s.next("pong");
    type Status = { platforms: Array<{ name: string; detail?: string }>; problems: Array<{ area: string; problem: string }> };
    const status = (await (await call("/v1/status")).json()) as Status;
    expect(status.platforms.find((p) => p.name === "signal")?.detail).toBe("bridged by gateway gw3: connected, signal-cli unreachable, 0 action(s) waiting");
    expect(status.problems).toContainEqual(expect.objectContaining({ area: "signal", problem: "the gateway cannot reach signal-cli (connection refused)" }));
    const relay = (await (await call("/v1/relay")).json()) as {
      gateways: Array<{ id: string; connected: boolean; platforms: string[]; actionsWaiting: number }>;
    };
    expect(relay.gateways.find((g) => g.id === GW3.id)).toMatchObject({ connected: true, platforms: ["signal"], actionsWaiting: 0 });
    s.send({ type: "bridge_status", platform: "signal", reachable: true });
    await close(s);
    const away = (await (await call("/v1/status")).json()) as Status;
    expect(away.problems).toContainEqual(expect.objectContaining({ area: "signal", problem: "the gateway that bridges Signal (gw3) is not connected" }));
  });
});
