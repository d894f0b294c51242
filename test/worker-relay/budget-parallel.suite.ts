import { env } from "../worker/config.ts";
import { describe, expect, it } from "vitest";
import { RESERVATION_TTL_MS, reserveTurn, settleTurn } from "../../workers/db/budget.ts";
import { busyElsewhereText } from "../../durable-objects/session-agent/budget.ts";
import { sl } from "../support/fixtures.ts";
import { settle, toSlack } from "../worker/platform-helpers.ts";
import { llm, slack } from "../worker/setup.ts";

// This project runs with DAILY_TOKEN_BUDGET=50000 and the default LLM_CONTEXT_TOKENS
// (32,000: what a running turn reserves). Each turn here reports 20,000 tokens, so the
// budget allows three turns (started at 0, 20,000 and 40,000 used): the 2,500-token
// budget with 1,000-token turns, scaled.
describe("DAILY_TOKEN_BUDGET across chats", () => {
  it("a user writing in 20 chats at once ran 20 turns against the budget: turns start only while recorded usage plus running turns' reservations is under it", async () => {
    const chats = Array.from({ length: 20 }, (_, i) => `D74${String(i).padStart(2, "0")}`);
    for (let i = 0; i < chats.length; i++) llm.then({ kind: "text", chunks: ["an answer"], usage: { prompt_tokens: 15_000, completion_tokens: 5_000 } });
    await Promise.all(chats.map((c, i) => toSlack(sl.dm(`question ${i}`, "U1003", c))));
    await settle();
    const ran = llm.calls.length;
    expect(ran).toBeGreaterThanOrEqual(2);
    expect(ran).toBeLessThanOrEqual(3);
    const answered = chats.filter((c) => slack.texts(c).includes("an answer"));
    expect(answered).toHaveLength(ran);
    // Every other chat was told why, once.
    for (const c of chats.filter((c) => !answered.includes(c))) {
      const said = slack.texts(c);
      expect(said, c).toHaveLength(1);
      expect(said[0] === busyElsewhereText(50_000) || /^You have used today's allowance of 50,000 tokens \((40|60),000 so far\)/.test(said[0]!), said[0]).toBe(
        true,
      );
    }
    // Later, one at a time: nothing more runs once the recorded usage reached the budget.
    llm.reset(); // the replies scripted for turns that never ran
    for (let round = 0; round < 3; round++) {
      llm.then({ kind: "text", chunks: ["a later answer"], usage: { prompt_tokens: 15_000, completion_tokens: 5_000 } });
      await toSlack(sl.dm(`later ${round}`, "U1003", "D7499"));
      await settle();
    }
    expect(ran + llm.calls.length).toBe(3);
    expect(slack.texts("D7499")[0]).toMatch(/^(a later answer|You have used today's allowance of 50,000 tokens \(60,000 so far\))/);
  });

  it("a reservation left by a turn that died stops counting when it expires; a settled one counts its real usage", async () => {
    const base = { userKey: "slack:U-crash", day: "2026-01-02", budget: 10_000, reserve: 10_000 };
    const t0 = Date.UTC(2026, 0, 2, 10);
    expect(await reserveTurn(env.DB, { ...base, turnId: "t1", sessionId: "s-crash-1", now: t0 })).toEqual({ ok: true });
    // Another chat of the same user, while t1 holds 10,000: refused (nothing used yet).
    expect(await reserveTurn(env.DB, { ...base, turnId: "t2", sessionId: "s-crash-2", now: t0 + 1 })).toEqual({ ok: false, used: 0, held: 10_000 });
    // t1's instance died: once its reservation expired, t2 may start.
    expect(await reserveTurn(env.DB, { ...base, turnId: "t2", sessionId: "s-crash-2", now: t0 + RESERVATION_TTL_MS + 1 })).toEqual({ ok: true });
    // t2 ends having used 9,500: that is what it holds now, and a third turn is refused.
    await settleTurn(env.DB, { turnId: "t2", sessionId: "s-crash-2", tokens: 9_500, now: t0 + RESERVATION_TTL_MS + 2 });
    expect(await reserveTurn(env.DB, { ...base, turnId: "t3", sessionId: "s-crash-3", now: t0 + RESERVATION_TTL_MS + 3 })).toEqual({ ok: true });
    expect(await reserveTurn(env.DB, { ...base, turnId: "t4", sessionId: "s-crash-4", now: t0 + RESERVATION_TTL_MS + 4 })).toEqual({
      ok: false,
      used: 0,
      held: 19_500,
    });
  });
});
