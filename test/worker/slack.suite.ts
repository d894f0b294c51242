import { describe, expect, it } from "vitest";
import { sl } from "../support/fixtures.ts";
import { SLACK_TEST, slackHeaders } from "../support/signing.ts";
import { newSession } from "./helpers.ts";
import { bind, deliver, routeOf, settle, toSlack } from "./platform-helpers.ts";
import { llm, slack } from "./setup.ts";

describe("Slack Events API webhook", () => {
  it("refuses a bad signature or a timestamp more than 300 s off with 401, even for url_verification", async () => {
    const body = JSON.stringify(sl.challenge());
    const stale = await slackHeaders(body, SLACK_TEST.secret, Math.floor(Date.now() / 1000) - 301);
    const wrong = await slackHeaders(body, "not-the-secret");
    for (const headers of [stale, wrong, { "content-type": "application/json" }]) expect((await deliver("slack", body, headers)).status).toBe(401);
    expect(slack.calls).toEqual([]);
  });

  it("echoes the url_verification challenge", async () => {
    const res = await toSlack(sl.challenge());
    expect(await res.json()).toEqual({ challenge: "the-challenge" });
  });

  it("answers a DM in the DM, keyed on the workspace and channel", async () => {
    expect((await toSlack(sl.dm("hello slack"))).status).toBe(200);
    await settle();
    expect(slack.texts("D1001").at(-1)).toBe("echo: hello slack");
    expect(await routeOf(`agent:main:slack:dm:${SLACK_TEST.team}:D1001`)).not.toBeNull();
  });

  it("answers a channel mention in a thread on it, and the thread goes on without mentions", async () => {
    const mention = sl.mention("help me", "U1001", "C1001");
    await toSlack(mention);
    await settle();
    const ts = String((mention.event as { ts: string }).ts);
    const post = slack.called("/chat.postMessage").at(-1)!;
    expect(post.body).toMatchObject({ channel: "C1001", thread_ts: ts, text: "echo: help me" });
    await toSlack(sl.threadReply("and then?", ts, "U1002"));
    await settle();
    expect(llm.calls).toHaveLength(2);
    expect(await routeOf(`agent:main:slack:group:${SLACK_TEST.team}:C1001:${ts}`)).not.toBeNull();
  });

  it("ignores its own messages, other bots, edits, and plain channel chatter", async () => {
    const own = sl.envelope({ type: "message", channel_type: "im", channel: "D1001", user: SLACK_TEST.botUserId, text: "me", ts: "1.1" });
    const bot = sl.envelope({ type: "message", channel_type: "im", channel: "D1001", bot_id: "B9", user: "U1001", text: "beep", ts: "1.2" });
    const edit = sl.envelope({ type: "message", subtype: "message_changed", channel_type: "im", channel: "D1001", user: "U1001", text: "x", ts: "1.3" });
    const chatter = sl.envelope({ type: "message", channel_type: "channel", channel: "C1001", user: "U1001", text: "lunch?", ts: "1.4" });
    for (const p of [own, bot, edit, chatter]) expect((await toSlack(p)).status).toBe(200);
    await settle();
    expect(llm.calls).toHaveLength(0);
    expect(slack.called("/chat.postMessage")).toEqual([]);
  });

  it("recognises a retried delivery by event_id: 200, no second turn", async () => {
    const event = sl.dm("only once");
    await toSlack(event);
    await toSlack(event, { "x-slack-retry-num": "1", "x-slack-retry-reason": "http_timeout" });
    await settle();
    expect(llm.calls).toHaveLength(1);
  });

  it("hears a bound thread (a handoff thread) without mentions", async () => {
    const sessionId = await newSession();
    await bind(`agent:main:slack:group:${SLACK_TEST.team}:C2002:1700.0001`, sessionId);
    await toSlack(sl.threadReply("continuing here", "1700.0001", "U1001", "C2002"));
    await settle();
    expect(slack.called("/chat.postMessage").at(-1)!.body).toMatchObject({ channel: "C2002", thread_ts: "1700.0001" });
  });

  it("runs /hermes slash commands and !commands in threads", async () => {
    const res = await toSlack(sl.slash("help"));
    expect(((await res.json()) as { text: string }).text).toContain("/hermes stop");
    // Commands with work behind them are answered after the webhook: privately, at response_url.
    await toSlack(sl.slash("stop", "U1001", "C3004"));
    await settle();
    expect(slack.responses().at(-1)).toBe("Nothing is running here.");
    const mention = sl.mention("!stop", "U1001", "C3003");
    await toSlack(mention);
    await settle();
    expect(slack.called("/chat.postMessage").at(-1)!.body).toMatchObject({ channel: "C3003", text: "Nothing is running here." });
    expect(llm.calls).toHaveLength(0);
  });
});

describe("Slack bad input", () => {
  it("ignores malformed JSON and unknown payload types with a 2xx, and refuses oversize bodies", async () => {
    for (const body of ["{nope", JSON.stringify({ type: "app_rate_limited" }), JSON.stringify(sl.envelope({ type: "reaction_added", user: "U1001" }))]) {
      expect((await deliver("slack", body, await slackHeaders(body))).status).toBe(200);
    }
    const big = JSON.stringify({ type: "event_callback", pad: "x".repeat(1024 * 1024) });
    expect((await deliver("slack", big, await slackHeaders(big))).status).toBe(413);
    await settle();
    expect(llm.calls).toHaveLength(0);
    expect(slack.calls).toEqual([]);
  });
});
