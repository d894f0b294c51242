import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { db } from "../../workers/db/client.ts";
import { claimHandoff, completeHandoff, failHandoff, getHandoffRow, HANDOFF_ERROR_MAX, listPendingHandoffs, reclaimStaleHandoffs, requestHandoff, STALE_HANDOFF_ERROR } from "../../workers/db/handoff.ts";
import { newSession } from "./helpers.ts";

const d = () => db(env);
const req = { platform: "telegram", chatId: null, thread: true };
const state = async (id: string) => {
  const r = await getHandoffRow(d(), id);
  return r ? { state: r.handoffState, platform: r.handoffPlatform, error: r.handoffError } : null;
};

describe("handoff state machine", () => {
  it("request marks a session pending with its platform and no error", async () => {
    const id = await newSession();
    expect(await requestHandoff(d(), id, req)).toBe(true);
    expect(await state(id)).toEqual({ state: "pending", platform: "telegram", error: null });
  });

  it("rejects a re-request while pending and while running", async () => {
    const id = await newSession();
    await requestHandoff(d(), id, req);
    expect(await requestHandoff(d(), id, { ...req, platform: "discord" })).toBe(false);
    await claimHandoff(d(), id);
    expect(await requestHandoff(d(), id, req)).toBe(false);
    expect((await state(id))!.state).toBe("running");
  });

  it("allows a retry after failure, and the retry clears the error; completing clears it too", async () => {
    const id = await newSession();
    await requestHandoff(d(), id, req);
    await claimHandoff(d(), id);
    await failHandoff(d(), id, "thread creation failed");
    expect(await state(id)).toEqual({ state: "failed", platform: "telegram", error: "thread creation failed" });
    expect(await requestHandoff(d(), id, { ...req, platform: "slack" })).toBe(true);
    expect(await state(id)).toEqual({ state: "pending", platform: "slack", error: null });
    await claimHandoff(d(), id);
    expect(await completeHandoff(d(), id, { chatId: "C1", threadId: "1.2" })).toBe(true);
    expect(await state(id)).toEqual({ state: "completed", platform: "slack", error: null });
  });

  it("lists pending rows only, oldest first, not running or terminal ones", async () => {
    const [a, b, c, e] = [await newSession(), await newSession(), await newSession(), await newSession()];
    await requestHandoff(d(), a, req, 1000);
    await requestHandoff(d(), b, req, 2000);
    await requestHandoff(d(), c, req, 3000);
    await claimHandoff(d(), c);
    await requestHandoff(d(), e, req, 500);
    await claimHandoff(d(), e);
    await completeHandoff(d(), e, { chatId: "1", threadId: null });
    const pending = (await listPendingHandoffs(d())).map((r) => r.id).filter((id) => [a, b, c, e].includes(id));
    expect(pending).toEqual([a, b]);
  });

  it("claims atomically: of many concurrent claimers exactly one wins", async () => {
    const id = await newSession();
    await requestHandoff(d(), id, req);
    const wins = await Promise.all(Array.from({ length: 8 }, () => claimHandoff(d(), id)));
    expect(wins.filter(Boolean)).toHaveLength(1);
    expect((await state(id))!.state).toBe("running");
  });

  it("records the failure reason, cut to 500 characters", async () => {
    const id = await newSession();
    await requestHandoff(d(), id, req);
    expect(await failHandoff(d(), id, "x".repeat(1000))).toBe(true);
    expect((await state(id))!.error).toHaveLength(HANDOFF_ERROR_MAX);
  });

  it("lets a waiter fail only a pending row: a claimed row belongs to the gateway", async () => {
    const id = await newSession();
    await requestHandoff(d(), id, req);
    await claimHandoff(d(), id);
    expect(await failHandoff(d(), id, "timed out waiting", { onlyStates: ["pending"] })).toBe(false);
    expect((await state(id))!.state).toBe("running");
  });

  it("answers null for an unknown session, and illegal transitions return false", async () => {
    expect(await getHandoffRow(d(), "no-such-session")).toBeNull();
    expect(await claimHandoff(d(), "no-such-session")).toBe(false);
    const id = await newSession();
    expect(await claimHandoff(d(), id)).toBe(false);
    expect(await completeHandoff(d(), id, { chatId: "1", threadId: null })).toBe(false);
    expect(await failHandoff(d(), id, "why")).toBe(false);
  });

  it("goes pending → running → completed with the transcript readable throughout", async () => {
    const id = await newSession();
    await requestHandoff(d(), id, req);
    expect((await listPendingHandoffs(d())).some((r) => r.id === id)).toBe(true);
    expect(await claimHandoff(d(), id)).toBe(true);
    expect((await listPendingHandoffs(d())).some((r) => r.id === id)).toBe(false);
    expect(await completeHandoff(d(), id, { chatId: "-100", threadId: "7" })).toBe(true);
    const row = (await getHandoffRow(d(), id))!;
    expect(row).toMatchObject({ handoffState: "completed", handoffDestChatId: "-100", handoffDestThreadId: "7" });
    expect(row.handoffClaimedAt).not.toBeNull();
    expect(row.handoffFinishedAt).not.toBeNull();
  });

  it("reclaims only running rows past their lease, failing them (never re-queued)", async () => {
    const [stale, fresh, waiting] = [await newSession(), await newSession(), await newSession()];
    for (const id of [stale, fresh, waiting]) await requestHandoff(d(), id, req);
    await claimHandoff(d(), stale, 1000);
    await claimHandoff(d(), fresh, 5000);
    const reclaimed = await reclaimStaleHandoffs(d(), 2000);
    expect(reclaimed).toContain(stale);
    expect(reclaimed).not.toContain(fresh);
    expect(await state(stale)).toEqual({ state: "failed", platform: "telegram", error: STALE_HANDOFF_ERROR });
    expect((await state(fresh))!.state).toBe("running");
    expect((await state(waiting))!.state).toBe("pending");
    expect(await requestHandoff(d(), stale, req)).toBe(true);
  });
});
