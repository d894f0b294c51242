import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { takeIn } from "../../workers/conversations/intake.ts";
import { helpText, refusalText } from "../../workers/conversations/texts.ts";
import { adapterFor } from "../../workers/platforms/registry.ts";
import type { PlatformEvent } from "../../workers/platforms/types.ts";
import { webhookResponse } from "../../workers/http/webhooks.ts";
import { dc, tg } from "../support/fixtures.ts";
import { inboxIdle, settle } from "./platform-helpers.ts";
import { llm, telegram } from "./setup.ts";

/** The intake with plain inputs, as a gateway connection or a bridge would call it: no HTTP context, follow-ups collected. */
function intake(update: unknown, inline: boolean) {
  const adapter = adapterFor(env, "telegram")!;
  const ingest = adapter.ingest(JSON.stringify(update), new Headers());
  if (ingest.kind !== "event") throw new Error(`not an event: ${ingest.kind}`);
  const followUps: Promise<unknown>[] = [];
  const event: PlatformEvent = ingest.event;
  return { adapter, event, followUps, take: () => takeIn({ env, adapter, event, inline, waitUntil: (work) => followUps.push(work) }) };
}

describe("the intake returns what it made of an event, and the webhook maps it", () => {
  it("takes an allowed user's message into the Inbox once: accepted, then accepted as a duplicate (the same ack both times)", async () => {
    const { adapter, event, take } = intake(tg.dm("hello intake", 1001), false);
    const first = await take();
    expect(first).toEqual({ kind: "accepted" });
    expect(await take()).toEqual({ kind: "accepted", duplicate: true });
    expect(webhookResponse(adapter, event, first).status).toBe(200);
    await inboxIdle("agent:main:telegram:dm:1001");
    await settle();
    expect(telegram.texts(1001).filter((t) => t === "echo: hello intake")).toHaveLength(1);
  });

  it("refuses a user who is not allowed with a code, posting the refusal through waitUntil when it cannot be inline", async () => {
    const { followUps, take } = intake(tg.dm("let me in", 1013), false);
    expect(await take()).toEqual({ kind: "refused", code: "not_allowed" });
    expect(followUps).toHaveLength(1);
    await Promise.all(followUps);
    expect(telegram.texts(1013)).toEqual([refusalText("telegram", "1013")]);
    expect(llm.calls).toHaveLength(0);
  });

  it("carries the refusal's text when the transport can answer inline, and posts nothing", async () => {
    const { followUps, take } = intake(tg.dm("let me in", 1014), true);
    expect(await take()).toEqual({ kind: "refused", code: "not_allowed", text: refusalText("telegram", "1014") });
    expect(followUps).toEqual([]);
  });

  it("answers /help inline when it can, else posts it once per delivery for someone not allowed", async () => {
    const update = tg.command("help", "", 1015);
    const inline = intake(update, true);
    expect(await inline.take()).toEqual({ kind: "answered", text: helpText(inline.adapter.commands) });
    const posted = intake(update, false);
    expect(await posted.take()).toEqual({ kind: "ignored", reason: "answered_by_post" });
    expect(await posted.take()).toEqual({ kind: "ignored", reason: "duplicate" });
    expect(posted.followUps).toHaveLength(1);
  });

  it("ignores a group message not addressed to the bot, with no Inbox reached", async () => {
    const { adapter, event, take } = intake(tg.group("chatting among ourselves", { userId: 1001 }), false);
    const result = await take();
    expect(result).toEqual({ kind: "ignored", reason: "not_addressed" });
    const res = webhookResponse(adapter, event, result);
    expect([res.status, await res.text()]).toEqual([200, ""]);
  });

  it("maps the same results to Discord's answers: the deferred ack for accepted, an ephemeral message for a refusal's text", async () => {
    const adapter = adapterFor(env, "discord")!;
    const ingest = adapter.ingest(JSON.stringify(dc.command("ask", { prompt: "hi" })), new Headers());
    if (ingest.kind !== "event") throw new Error(`not an event: ${ingest.kind}`);
    const accepted = await webhookResponse(adapter, ingest.event, { kind: "accepted" }).json();
    expect(accepted).toMatchObject({ type: 5 });
    const refused = await webhookResponse(adapter, ingest.event, { kind: "refused", code: "not_allowed", text: "no" }).json();
    expect(refused).toMatchObject({ type: 4, data: { content: "no" } });
    expect(webhookResponse(adapter, ingest.event, { kind: "refused", code: "not_allowed" }).status).toBe(200);
  });
});
