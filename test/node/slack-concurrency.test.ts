import { describe, expect, it } from "vitest";
import { SlackAdapter, slackTarget } from "../../workers/platforms/slack/index.ts";

/**
 * Seen under load (bench/webhook-ack, 1000 new Slack chats, 50 in flight): past 100 calls in
 * flight, @slack/web-api's request queue started the waiting calls from the ones that
 * finished, in another Durable Object's I/O context; workerd refused them their answers, and
 * 233 of 1000 replies were posted two or three times. Every call must go out at once, from
 * its own caller.
 */
describe("Slack calls are never queued inside the client", () => {
  it("starts 150 concurrent postMessage calls before any of them is answered", async () => {
    const started: Array<() => void> = [];
    const fetchImpl: typeof fetch = (_input, _init) =>
      new Promise<Response>((resolve) =>
        started.push(() => resolve(Response.json({ ok: true, channel: "D1", ts: `1700000000.${String(started.length).padStart(6, "0")}` }))),
      );
    const slack = new SlackAdapter({ botToken: "xoxb-test", signingSecret: "s", apiUrl: "https://slack.test/api/", fetch: fetchImpl });
    const posts = Array.from({ length: 150 }, (_, i) => slack.post(slackTarget(`D${i}`, null, true), `reply ${i}`));
    // Nothing is answered meanwhile, so a client that queues stays at its limit however long this
    // waits; the bound is rounds of the event loop, generous for a loaded machine (50 were not: 148 of 150 once).
    for (let i = 0; i < 5000 && started.length < 150; i++) await new Promise((r) => setImmediate(r));
    expect(started.length).toBe(150);
    for (const answer of started) answer();
    const ids = await Promise.all(posts);
    expect(ids.every((x) => x.length === 1)).toBe(true);
  });
});
