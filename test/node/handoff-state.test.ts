import { describe, expect, it } from "vitest";
import { claim, complete, fail, HANDOFF_ERROR_MAX, inFlight, request, type HandoffRequest } from "../../durable-objects/session-agent/handoff-state.ts";
import { newRecord, type SessionRecord } from "../../durable-objects/session-agent/record.ts";

const req: HandoffRequest = { platform: "telegram", chatId: null, thread: true };

/** A session row that applies each transition it is given (a null patch changes nothing). */
function session() {
  let rec: SessionRecord = newRecord({ source: "cli", model: "m" }, 0, "s1");
  const apply = (patch: Partial<SessionRecord> | null) => {
    if (patch) rec = { ...rec, ...patch };
    return patch !== null;
  };
  const state = () => ({ state: rec.handoffState, platform: rec.handoffPlatform, error: rec.handoffError });
  return {
    get rec() {
      return rec;
    },
    apply,
    state,
  };
}

describe("handoff state machine (SPEC section 4)", () => {
  it("request marks a session pending with its platform and no error", () => {
    const s = session();
    expect(s.apply(request(s.rec, req, 1))).toBe(true);
    expect(s.state()).toEqual({ state: "pending", platform: "telegram", error: null });
    expect(inFlight(s.rec)).toBe(true);
  });

  it("rejects a re-request while pending and while running", () => {
    const s = session();
    s.apply(request(s.rec, req, 1));
    expect(request(s.rec, { ...req, platform: "discord" }, 2)).toBeNull();
    s.apply(claim(s.rec, 3));
    expect(request(s.rec, req, 4)).toBeNull();
    expect(s.state().state).toBe("running");
  });

  it("allows a retry after failure, and the retry clears the error; completing clears it too", () => {
    const s = session();
    s.apply(request(s.rec, req, 1));
    s.apply(claim(s.rec, 2));
    s.apply(fail(s.rec, "thread creation failed", 3));
    expect(s.state()).toEqual({ state: "failed", platform: "telegram", error: "thread creation failed" });
    expect(s.apply(request(s.rec, { ...req, platform: "slack" }, 4))).toBe(true);
    expect(s.state()).toEqual({ state: "pending", platform: "slack", error: null });
    s.apply(claim(s.rec, 5));
    expect(s.apply(complete(s.rec, { chatId: "C1", threadId: "1.2" }, 6))).toBe(true);
    expect(s.state()).toEqual({ state: "completed", platform: "slack", error: null });
    expect(s.rec).toMatchObject({ handoffDestChatId: "C1", handoffDestThreadId: "1.2", handoffClaimedAt: 5, handoffFinishedAt: 6 });
  });

  it("claims once: a second claim of the same request does nothing", () => {
    const s = session();
    s.apply(request(s.rec, req, 1));
    expect(s.apply(claim(s.rec, 2))).toBe(true);
    expect(s.apply(claim(s.rec, 3))).toBe(false);
    expect(s.rec.handoffClaimedAt).toBe(2);
  });

  it("records the failure reason, cut to 500 characters", () => {
    const s = session();
    s.apply(request(s.rec, req, 1));
    s.apply(fail(s.rec, "x".repeat(1000), 2));
    expect(s.rec.handoffError).toHaveLength(HANDOFF_ERROR_MAX);
  });

  it("lets a waiter fail only a pending handoff: a claimed one belongs to its runner", () => {
    const s = session();
    s.apply(request(s.rec, req, 1));
    s.apply(claim(s.rec, 2));
    expect(s.apply(fail(s.rec, "timed out waiting", 3, ["pending"]))).toBe(false);
    expect(s.state().state).toBe("running");
  });

  it("refuses illegal transitions from none", () => {
    const s = session();
    expect(claim(s.rec, 1)).toBeNull();
    expect(complete(s.rec, { chatId: "1", threadId: null }, 1)).toBeNull();
    expect(fail(s.rec, "why", 1)).toBeNull();
    expect(inFlight(s.rec)).toBe(false);
  });
});

describe("regression: the console rendered a stored javascript: destination URL as a link", () => {
  it("a completed handoff stores its destination link only when it is http(s)", () => {
    for (const [url, stored] of [
      ["javascript:alert(1)", null],
      ["JaVaScRiPt:alert(1)", null],
      ["data:text/html,<b>x</b>", null],
      ["https://t.me/c/777/5", "https://t.me/c/777/5"],
      ["http://example.test/x", "http://example.test/x"],
    ] as const) {
      const s = session();
      s.apply(request(s.rec, req, 1));
      s.apply(claim(s.rec, 2));
      s.apply(complete(s.rec, { chatId: "-100777", threadId: "5", url }, 3));
      expect(s.rec.handoffDestUrl).toBe(stored);
    }
  });
});
