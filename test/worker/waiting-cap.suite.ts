import { listDurableObjectIds } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MAX_WAITING_PER_USER, SLOW_DOWN_TEXT } from "../../durable-objects/session-agent/budget.ts";
import { conversation } from "../support/fake-llm.ts";
import { sl } from "../support/fixtures.ts";
import { settle, toSlack, untilStarted } from "./platform-helpers.ts";
import { llm, slack } from "./setup.ts";

describe("messages one user may have waiting in a session", () => {
  it("one user's flood queued without limit: past 5 waiting, the next message gets one slow-down notice, later ones none, and none is run", async () => {
    const channel = "D7301";
    const gate = llm.hold(["working "], ["on it"]);
    await toSlack(sl.dm("first", "U1001", channel));
    await untilStarted(gate);
    for (let i = 0; i < 12; i++) await toSlack(sl.dm(`flood ${i}`, "U1001", channel));
    await settleInbox();
    expect(slack.texts(channel).filter((t) => t === SLOW_DOWN_TEXT)).toHaveLength(1);
    gate.release();
    await settle();
    // The running turn and the five that waited ran; the seven over the cap did not.
    expect(llm.calls).toHaveLength(1 + MAX_WAITING_PER_USER);
    const asked = llm.calls.map((c) => conversation(c.body).at(-1)?.content);
    expect(asked).toEqual(["first", ...Array.from({ length: MAX_WAITING_PER_USER }, (_, i) => `flood ${i}`)]);
    // With room again, a message is taken, and a later flood would be told again.
    await toSlack(sl.dm("after the answers", "U1001", channel));
    await settle();
    expect(slack.texts(channel).at(-1)).toBe("echo: after the answers");
    expect(slack.texts(channel).filter((t) => t === SLOW_DOWN_TEXT)).toHaveLength(1);
  });
});

/** Waits until every Inbox handed on what it holds (the held turn keeps the session busy). */
async function settleInbox(): Promise<void> {
  const inboxes = await listDurableObjectIds(env.INBOX);
  await Promise.all(inboxes.map((id) => env.INBOX.get(id).idle()));
}
