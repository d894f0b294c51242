import { describe, expect, it } from "vitest";
import {
  GATEWAY_INTENTS,
  GatewayProtocol,
  HANDSHAKE_TIMEOUT_MS,
  IDENTIFY_SPACING_MS,
  OP,
  RESUME_CLOSE,
  type GatewayAction,
} from "../../workers/platforms/discord/gateway/protocol.ts";
import hello from "../corpus/discord/gateway/hello.json" with { type: "json" };
import ack from "../corpus/discord/gateway/heartbeat-ack.json" with { type: "json" };
import reconnect from "../corpus/discord/gateway/reconnect.json" with { type: "json" };
import invalid from "../corpus/discord/gateway/invalid-session.json" with { type: "json" };
import ready from "../corpus/discord/gateway/ready.json" with { type: "json" };
import message from "../corpus/discord/gateway/message.json" with { type: "json" };
import resumeExample from "../corpus/discord/gateway/resume.json" with { type: "json" };

const T0 = Date.UTC(2026, 0, 1);
const INTERVAL = hello.payload.d.heartbeat_interval;
const json = (x: unknown) => JSON.stringify(x);
const sends = (actions: GatewayAction[]) => actions.flatMap((a) => (a.type === "send" ? [a.payload] : []));

/** A protocol with a fixed jitter (0.5: the first beat half an interval after HELLO), connected through READY. */
function connected(random = 0.5) {
  const p = new GatewayProtocol({ token: "bot-token", random: () => random });
  expect(p.tick(T0)).toEqual([{ type: "open", resumeUrl: null }]);
  p.opened(T0);
  const identify = sends(p.frame(json(hello.payload), T0));
  p.frame(json(ready.payload), T0 + 10);
  p.handled(ready.payload.s);
  return { p, identify };
}

describe("Discord Gateway protocol (pure, manual clock)", () => {
  it("identifies after HELLO with the intents it needs, then is ready with READY's session and resume URL", () => {
    const { p, identify } = connected();
    expect(identify).toEqual([
      { op: OP.IDENTIFY, d: { token: "bot-token", intents: GATEWAY_INTENTS, properties: expect.objectContaining({ os: expect.any(String) }) } },
    ]);
    // GUILDS (1 << 0), GUILD_MESSAGES (1 << 9), DIRECT_MESSAGES (1 << 12), MESSAGE_CONTENT (1 << 15).
    expect(GATEWAY_INTENTS).toBe(1 + 512 + 4096 + 32768);
    expect(p.phase).toBe("ready");
    expect(p.memory).toMatchObject({
      sessionId: ready.payload.d.session_id,
      resumeUrl: ready.payload.d.resume_gateway_url,
      botUserId: ready.payload.d.user.id,
      seq: 1,
      connectedSince: T0 + 10,
      identifies: 1,
    });
  });

  it("beats first after interval × jitter, then every interval, carrying the last sequence; an ACK gives the latency", () => {
    const { p } = connected(0.25);
    const first = T0 + Math.floor(INTERVAL * 0.25);
    expect(p.nextDeadline()).toBe(first);
    expect(p.tick(first - 1)).toEqual([]);
    p.frame(json(message.payload), first - 1);
    p.handled(message.payload.s);
    expect(sends(p.tick(first))).toEqual([{ op: OP.HEARTBEAT, d: 2 }]);
    p.frame(json(ack.payload), first + 35);
    expect(p.memory).toMatchObject({ lastAckAt: first + 35, latencyMs: 35 });
    expect(p.nextDeadline()).toBe(first + INTERVAL);
    expect(sends(p.tick(first + INTERVAL))).toEqual([{ op: OP.HEARTBEAT, d: 2 }]);
  });

  it("answers Discord's heartbeat request (op 1) at once", () => {
    const { p } = connected();
    expect(sends(p.frame(json({ op: OP.HEARTBEAT, d: null }), T0 + 100))).toEqual([{ op: OP.HEARTBEAT, d: 1 }]);
  });

  it("treats a heartbeat left without an ACK until the next beat as a zombie: closes (not 1000) and resumes", () => {
    const { p } = connected(0);
    expect(sends(p.tick(T0))).toEqual([{ op: OP.HEARTBEAT, d: 1 }]);
    const zombie = p.tick(T0 + INTERVAL);
    expect(zombie).toEqual([{ type: "close", code: RESUME_CLOSE, reason: "no heartbeat ACK" }]);
    expect(p.memory.lastCloseCode).toBe(RESUME_CLOSE);
    const at = p.nextDeadline() ?? 0;
    expect(at).toBeGreaterThan(T0 + INTERVAL);
    expect(p.tick(at)).toEqual([{ type: "open", resumeUrl: ready.payload.d.resume_gateway_url }]);
    p.opened(at);
    const resume = sends(p.frame(json(hello.payload), at));
    // The shape of the docs' Example Resume, with this session.
    expect(Object.keys(resume[0]?.d as object).sort()).toEqual(Object.keys(resumeExample.payload.d).sort());
    expect(resume).toEqual([{ op: OP.RESUME, d: { token: "bot-token", session_id: ready.payload.d.session_id, seq: 1 } }]);
    p.frame(json({ op: 0, s: 2, t: "RESUMED", d: null }), at + 5);
    expect(p.memory.resumes).toBe(1);
  });

  it("RECONNECT: closes at once and reopens on the resume URL", () => {
    const { p } = connected();
    expect(p.frame(json(reconnect.payload), T0 + 50)).toEqual([{ type: "close", code: RESUME_CLOSE, reason: "Discord asked to reconnect" }]);
    expect(p.tick(T0 + 50)).toEqual([{ type: "open", resumeUrl: ready.payload.d.resume_gateway_url }]);
  });

  it("INVALID_SESSION false: forgets the session and identifies again after 1–5 s; true: resumes", () => {
    const { p } = connected(0.5);
    expect(p.frame(json(invalid.payload), T0 + 6_000)[0]).toMatchObject({ type: "close" });
    expect(p.memory.sessionId).toBeNull();
    expect(p.nextDeadline()).toBe(T0 + 6_000 + 1_000 + 2_000);
    expect(p.tick(T0 + 8_999)).toEqual([]);
    expect(p.tick(T0 + 9_000)).toEqual([{ type: "open", resumeUrl: null }]);

    const again = connected(0.5).p;
    again.frame(json({ op: OP.INVALID_SESSION, d: true }), T0 + 100);
    expect(again.tick(T0 + 3_100)).toEqual([{ type: "open", resumeUrl: ready.payload.d.resume_gateway_url }]);
  });

  it("keeps IDENTIFYs 5 s apart (Discord's identify rate limit)", () => {
    const { p } = connected();
    // 4009: session timed out, a new session is needed at once.
    p.closed(4009, T0 + 100);
    const at = p.nextDeadline() ?? 0;
    expect(p.tick(at)).toEqual([]);
    expect(p.nextDeadline()).toBe(T0 + IDENTIFY_SPACING_MS);
    expect(p.tick(T0 + IDENTIFY_SPACING_MS)).toEqual([{ type: "open", resumeUrl: null }]);
  });

  it("close 4014 stops it with the fix: no reconnecting, however long, until the cause is fixed", () => {
    const { p } = connected();
    expect(p.closed(4014, T0 + 1_000, "digest")).toEqual([{ type: "stopped", code: 4014 }]);
    expect(p.memory.stopped).toEqual({ code: 4014, at: T0 + 1_000, token: "digest" });
    expect(p.memory.sessionId).toBeNull();
    expect(p.nextDeadline()).toBeNull();
    for (const t of [T0 + 2_000, T0 + 3_600_000, T0 + 30 * 86_400_000]) expect(p.tick(t)).toEqual([]);
    p.fixed(T0 + 40 * 86_400_000);
    expect(p.tick(T0 + 40 * 86_400_000)).toEqual([{ type: "open", resumeUrl: null }]);
  });

  it("an ordinary drop (1006) resumes after a jittered backoff that grows while it keeps failing", () => {
    const { p } = connected(0.5);
    p.closed(1006, T0);
    const first = (p.nextDeadline() ?? 0) - T0;
    expect(p.tick(T0 + first)).toEqual([{ type: "open", resumeUrl: ready.payload.d.resume_gateway_url }]);
    p.openFailed(T0 + first);
    expect((p.nextDeadline() ?? 0) - (T0 + first)).toBeGreaterThan(first);
  });

  it("gives up a resume URL that keeps failing and identifies a fresh session", () => {
    const { p } = connected(0.5);
    p.closed(1006, T0);
    // Six failures in a row, the drop counted: five resume attempts, then GET /gateway/bot.
    let now = T0;
    const urls: Array<string | null> = [];
    for (let i = 0; i < 6; i++) {
      now = p.nextDeadline() ?? now;
      const [open] = p.tick(now);
      urls.push(open?.type === "open" ? open.resumeUrl : "not an open");
      p.openFailed(now);
    }
    expect(urls).toEqual([...Array(5).fill(ready.payload.d.resume_gateway_url), null]);
  });

  it("gives up a socket that never says HELLO", () => {
    const p = new GatewayProtocol({ token: "t", random: () => 0 });
    p.tick(T0);
    p.opened(T0);
    expect(p.nextDeadline()).toBe(T0 + HANDSHAKE_TIMEOUT_MS);
    expect(p.tick(T0 + HANDSHAKE_TIMEOUT_MS)[0]).toMatchObject({ type: "close" });
  });
});
