import { afterEach, describe, expect, it } from "vitest";
import { NEW_SESSION_TEXT } from "../../cli/gateway/index.ts";
import { FakeConnector, inboundEvent, type FakeSocket, type SentFrame } from "../support/fake-connector.ts";
import { loopbackLlm, startGateway, tempDb, type GatewayRun } from "../support/gateway-harness.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { conversation, imagesOf, lastUserText } from "../support/fake-llm.ts";
import { dataUrl, PNG } from "../support/files.ts";
import { FakeFiles } from "../support/fake-platforms.ts";
import { serve } from "../support/http.ts";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function llm() {
  const l = await loopbackLlm();
  cleanups.push(l.close);
  return l;
}

const isAck = (bufferId: string) => (f: SentFrame) => f.type === "inbound_ack" && f.bufferId === bufferId;
const isOp = (op: string, chat?: string) => (f: SentFrame) => {
  const a = f.action as { op: string; chat_id: string } | undefined;
  return f.type === "outbound" && a?.op === op && (chat === undefined || a.chat_id === chat);
};
const isFinal = (chat: string) => (f: SentFrame) =>
  f.type === "outbound" && (f.action as { final?: boolean; chat_id: string }).final === true && (f.action as { chat_id: string }).chat_id === chat;
const action = (f: SentFrame) => f.action as { op: string; content: string; message_id?: string; final?: boolean; target?: string };

async function stop(gw: GatewayRun, s: FakeSocket): Promise<number> {
  gw.signals.emit("SIGTERM");
  await s.waitFor((f) => f.type === "going_idle");
  s.frame({ type: "going_idle_ack" });
  return gw.exit;
}

async function connected(opts: { llmUrl?: string; dbPath?: string; busyPolicy?: "queue" | "interrupt"; clock?: ManualClock } = {}) {
  const clock = opts.clock ?? new ManualClock();
  const connector = new FakeConnector();
  const gw = startGateway({
    connector,
    clock,
    ...(opts.llmUrl ? { llmUrl: opts.llmUrl } : {}),
    ...(opts.dbPath ? { dbPath: opts.dbPath } : {}),
    ...(opts.busyPolicy ? { busyPolicy: opts.busyPolicy } : {}),
  });
  const s = await connector.socket(1);
  await s.handshake();
  return { clock, connector, gw, s };
}

describe("gateway turns (the shared turn runtime, over the relay)", () => {
  it("acks a message once it is stored, shows typing, and streams the reply by edits, ending with the full Markdown", async () => {
    const { llm: model, url, served } = await llm();
    const gate = model.hold(["**Hello** "], ["there"]);
    const { clock, gw, s } = await connected({ llmUrl: url });
    const ev = { ...inboundEvent("42", "7", "hi"), target: '{"platform":"telegram","private":true,"ref":"{}"}' };
    s.frame({ type: "inbound", event: ev, bufferId: "b1" });
    await s.waitFor(isAck("b1"));
    await s.waitFor(isOp("typing", "42"));
    await served(1);
    const first = await s.waitFor(isOp("send", "42"));
    expect(action(first)).toMatchObject({ op: "send", content: "**Hello** ", final: false, target: ev.target });
    s.frame({ type: "inbound", event: ev, bufferId: "b1-again" }); // a replay while it runs: acked, not run again
    await s.waitFor(isAck("b1-again"));
    gate.release();
    const last = await s.waitFor(isFinal("42"));
    expect(action(last)).toMatchObject({ op: "edit", content: "**Hello** there", final: true });
    expect(action(last).message_id).toMatch(/^m\d+$/);
    expect(model.calls).toHaveLength(1);
    const typing = s.sent.filter(isOp("typing")).length;
    clock.advance(20_000);
    expect(s.sent.filter(isOp("typing"))).toHaveLength(typing);
    expect(await stop(gw, s)).toBe(0);
  });

  it("BUSY_POLICY=interrupt: a newer message stops the running turn, as at the edge", async () => {
    const { llm: model, url, served } = await llm();
    model.hold(["working on it "], ["never"]);
    const { gw, s } = await connected({ llmUrl: url, busyPolicy: "interrupt" });
    s.frame({ type: "inbound", event: inboundEvent("6", "1", "long one"), bufferId: "1" });
    await served(1);
    await s.waitFor(isOp("send", "6"));
    s.frame({ type: "inbound", event: inboundEvent("6", "2", "actually, this"), bufferId: "2" });
    const finals = [await s.waitFor(isFinal("6")), await s.waitFor(isFinal("6"), 2)].map((f) => action(f).content);
    expect(finals, JSON.stringify(s.sent.filter((f) => f.type === "outbound"))).toEqual(["working on it ", "echo: actually, this"]);
    expect(await stop(gw, s)).toBe(0);
  });

  it("does not rerun a replay after a reconnect or a restart on the same database, and keeps the transcript", async () => {
    const { llm: model, url } = await llm();
    const dbPath = tempDb();
    const ev = inboundEvent("5", "77", "remember me");
    const first = await connected({ llmUrl: url, dbPath });
    first.s.frame({ type: "inbound", event: ev, bufferId: "b1" });
    await first.s.waitFor(isFinal("5"));
    first.s.closeFromServer(1006);
    first.clock.advance(first.clock.pending()[0]!);
    const s2 = await first.connector.socket(2);
    await s2.handshake();
    s2.frame({ type: "inbound", event: ev, bufferId: "b2" });
    await s2.waitFor(isAck("b2"));
    expect(await stop(first.gw, s2)).toBe(0);
    expect(s2.closedByGateway?.code).toBe(1000);

    const again = await connected({ llmUrl: url, dbPath });
    again.s.frame({ type: "inbound", event: ev, bufferId: "b3" }, { type: "inbound", event: inboundEvent("5", "78", "and now?"), bufferId: "b4" });
    await again.s.waitFor(isFinal("5"));
    expect(again.s.finals("5")).toEqual(["echo: and now?"]);
    expect(model.calls).toHaveLength(2);
    // The same instructions as at the edge: where the agent talks, from the session key.
    expect(model.calls[1]!.body.messages[0]).toMatchObject({
      role: "system",
      content: expect.stringContaining("You are talking on Telegram, in a direct message"),
    });
    expect(conversation(model.calls[1]!.body).map((m) => [m.role, m.content])).toEqual([
      ["user", "remember me"],
      ["assistant", "echo: remember me"],
      ["user", "and now?"],
    ]);
    expect(await stop(again.gw, again.s)).toBe(0);
  });

  it("regression: after a crash the re-run stored the user message twice; now the next run re-runs it once", async () => {
    const { llm: model, url, served } = await llm();
    const dbPath = tempDb();
    model.hold(["half "], ["never"]);
    const first = await connected({ llmUrl: url, dbPath });
    first.s.frame({ type: "inbound", event: inboundEvent("4", "1", "survive this"), bufferId: "b1" });
    await first.s.waitFor(isAck("b1"));
    await served(1);
    // The process dies: no shutdown, nothing more from it. A new run on the same file:
    const again = await connected({ llmUrl: url, dbPath });
    await again.s.waitFor(isFinal("4"));
    expect(again.s.finals("4")).toEqual(["echo: survive this"]);
    expect(conversation(model.calls.at(-1)!.body).map((m) => m.content)).toEqual(["survive this"]);
    expect(await stop(again.gw, again.s)).toBe(0);
  });

  it("interrupt_inbound (/stop) stops only that session's turn and drops what waits behind it", async () => {
    const { llm: model, url, served } = await llm();
    model.hold(["partial "], ["never shown"]);
    const gateB = model.hold(["B says "], ["hi"]);
    const { gw, s } = await connected({ llmUrl: url });
    const a1 = inboundEvent("a", "1", "first for a");
    s.frame({ type: "inbound", event: a1, bufferId: "a1" });
    await served(1);
    s.frame({ type: "inbound", event: inboundEvent("b", "1", "for b"), bufferId: "b1" });
    await served(2);
    s.frame({ type: "inbound", event: inboundEvent("a", "2", "second for a"), bufferId: "a2" });
    await s.waitFor(isAck("a2"));
    s.frame({ type: "interrupt_inbound", session_key: a1.session_key, chat_id: "a" });
    expect(action(await s.waitFor(isFinal("a"))).content).toBe("partial ");
    expect(gateB.cancelled).toBe(false);
    gateB.release();
    expect(action(await s.waitFor(isFinal("b"))).content).toBe("B says hi");
    expect(s.finals("a")).toEqual(["partial "]);
    expect(model.calls).toHaveLength(2);
    expect(await stop(gw, s)).toBe(0);
  });

  it("answers /new with a fresh transcript and provider failures with a warning", async () => {
    const { llm: model, url } = await llm();
    const { gw, s } = await connected({ llmUrl: url });
    model.text("noted");
    model.then({ kind: "http", status: 401, body: '{"error":{"message":"bad key"}}' });
    s.frame(
      { type: "inbound", event: inboundEvent("9", "1", "keep this"), bufferId: "1" },
      { type: "inbound", event: inboundEvent("9", "2", " /new "), bufferId: "2" },
      { type: "inbound", event: inboundEvent("9", "3", "fresh start"), bufferId: "3" },
      { type: "inbound", event: inboundEvent("9", "4", "once more"), bufferId: "4" },
    );
    await s.waitFor(isFinal("9"), 4);
    const finals = s.finals("9");
    expect(finals).toContain(NEW_SESSION_TEXT);
    expect(finals.filter((t) => t !== NEW_SESSION_TEXT)[0]).toBe("noted");
    expect(finals.filter((t) => t !== NEW_SESSION_TEXT)[1]).toMatch(/^⚠️ the model provider rejected the API key \(HTTP 401\)/);
    // The failed turn left its user message unanswered; the core's repair merges it into the next.
    expect(finals.at(-1)).toBe("echo: fresh start\n\nonce more");
    expect(conversation(model.calls[1]!.body).map((m) => m.content)).toEqual(["fresh start"]);
    expect(await stop(gw, s)).toBe(0);
  });

  it("a final reply the connector does not confirm within 30 s is posted anew (never lost), and says so once", async () => {
    const { gw, s, clock } = await connected();
    s.autoResult = false;
    s.frame({ type: "inbound", event: inboundEvent("3", "1", "hello"), bufferId: "b1" });
    await s.waitFor(isAck("b1"));
    const send = await s.waitFor(isOp("send", "3"));
    clock.advance(30_000);
    const again = await s.waitFor(isOp("send", "3"), 2);
    expect(action(again).content).toContain("(offline model)");
    expect(gw.stderr()).toContain("no outbound_result within 30s; it may or may not have run");
    s.result(again.requestId as string, { success: true, message_id: "m9" });
    expect(send).not.toBe(again);
    expect(await stop(gw, s)).toBe(0);
  });

  it("on SIGTERM interrupts running turns, goes idle, waits at most 2 s for the ack and closes with 1000", async () => {
    const { llm: model, url, served } = await llm();
    model.hold();
    const { gw, s, clock } = await connected({ llmUrl: url });
    const ev = inboundEvent("8", "1", "long job");
    s.frame({ type: "inbound", event: ev, bufferId: "run" });
    await served(1);
    gw.signals.emit("SIGTERM");
    expect(await s.waitFor((f) => f.type === "interrupt")).toEqual({ type: "interrupt", session_key: ev.session_key, reason: "gateway stopping" });
    await s.waitFor((f) => f.type === "going_idle");
    await s.waitFor(isFinal("8"));
    expect(s.closedByGateway).toBeNull();
    clock.advance(2_000);
    expect(await gw.exit).toBe(0);
    expect(s.closedByGateway).toEqual({ code: 1000, reason: "gateway stopping" });
    expect(model.calls).toHaveLength(1);
  });

  it("fetches a relayed message's attachments through the connector's links: the image shown, a file the connector could not fetch said so", async () => {
    const { llm: model, url, served } = await llm();
    const files = new FakeFiles();
    files.serve("/relay/media/relay/gw-test/b9/0-cat.png?exp=1&sig=x", PNG, "image/png");
    const server = await serve((req) => files.handle(req));
    cleanups.push(() => server.close());
    const { gw, s } = await connected({ llmUrl: url });
    const ev = {
      ...inboundEvent("43", "8", "what is this?"),
      media_urls: [`${server.url}/relay/media/relay/gw-test/b9/0-cat.png?exp=1&sig=x`, ""],
      media: [
        { kind: "image" as const, mime: "image/png", size: PNG.byteLength, filename: "cat.png", seconds: null },
        { kind: "document" as const, mime: "text/plain", size: 5, filename: "x.txt", seconds: null, error: "Telegram getFile failed" },
      ],
      message_type: "image",
    };
    s.frame({ type: "inbound", event: ev, bufferId: "b9" });
    await s.waitFor(isFinal("43"));
    await served(1);
    const body = model.calls[0]!.body;
    expect(imagesOf(body.messages.at(-1)!.content)).toEqual([dataUrl("image/png", PNG)]);
    expect(lastUserText(body)).toBe(
      "what is this?\n\n[image cat.png (image/png, 70 B): the image is attached]\n[document x.txt (text/plain, 5 B): it could not be fetched (Telegram getFile failed), so its content is not known]",
    );
    expect(files.requests).toHaveLength(1);
    expect(await stop(gw, s)).toBe(0);
  });
});
