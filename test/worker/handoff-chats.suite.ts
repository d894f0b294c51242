import { abortAllDurableObjects } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { STALE_HANDOFF_ERROR } from "../../durable-objects/session-agent/handoff-state.ts";
import { db } from "../../workers/db/client.ts";
import { joinAccounts, OPERATOR_ACCOUNT } from "../../workers/db/people.ts";
import { setHome } from "../../workers/db/platform-state.ts";
import { HANDOFF_LEASE_MS, runMaintenance } from "../../workers/maintenance.ts";
import { conversation, textOf } from "../support/fake-llm.ts";
import { dc, sl, tg } from "../support/fixtures.ts";
import { SLACK_TEST, TELEGRAM_TEST } from "../support/signing.ts";
import { wa } from "../support/whatsapp-fixtures.ts";
import { bodyText, call, messages, newSession, postTurn, readEvents } from "./helpers.ts";
import { bind, routeOf, sessionFor, settle, tgCommand, toDiscord, toSlack, toTelegram, toWhatsApp } from "./platform-helpers.ts";
import { discord, llm, slack, telegram, whatsapp } from "./setup.ts";

// Users 1021-1025, U1021-U1025, 2021-2025 and 15550001021 are this file's (vitest.config.ts);
// 1025, U1025 and 2025 are admins. Each test links its own pair, so the files may run in any order.

const link = (a: [string, string], b: [string, string]) =>
  joinAccounts(env.DB, { platform: a[0], userId: a[1] }, { platform: b[0], userId: b[1] }, Date.now(), () => `person_${a.join("_")}`);

type Handoff = {
  state: string;
  platform: string;
  from: string | null;
  error: string | null;
  destination: { chat_id: string; thread_id: string | null } | null;
};

async function handoffOf(id: string): Promise<Handoff | null> {
  return ((await (await call(`/v1/sessions/${id}/handoff`)).json()) as { handoff: Handoff | null }).handoff;
}

const tgDm = (user: number) => `agent:main:telegram:dm:${user}`;

describe("/handoff from a chat", () => {
  it("Telegram → Slack DM: the session moves to the same person's Slack DM, answers there with its history; the Telegram chat is unbound and told", async () => {
    await link(["telegram", "1022"], ["slack", "U1022"]);
    await toTelegram(tg.dm("plan a trip to Lisbon", 1022));
    await settle();
    const id = (await sessionFor(tgDm(1022)))!;

    await tgCommand("handoff", "slack", 1022);
    expect(telegram.texts(1022).at(-1)).toBe("Handing this session to your Slack DM… I will say here when it has moved.");
    await settle();
    expect(await handoffOf(id)).toMatchObject({ state: "completed", platform: "slack", from: "telegram", destination: { chat_id: "DU1022", thread_id: null } });
    // The notice turn answered in the Slack DM, opened with conversations.open.
    expect(slack.calls.some((c) => c.path.endsWith("/conversations.open") && c.body.users === "U1022")).toBe(true);
    expect(slack.texts("DU1022").at(-1)).toContain("handed off from Telegram to this slack chat");
    expect(telegram.texts(1022).at(-1)).toMatch(
      new RegExp(
        `^This session moved to your Slack DM( \\(https://\\S+\\))?\\. Your next message here starts a new session; /resume ${id} brings this one back\\.$`,
      ),
    );
    expect(await sessionFor(tgDm(1022))).toBeNull();
    const slackKey = `agent:main:slack:dm:${SLACK_TEST.team}:DU1022`;
    expect(await routeOf(slackKey)).toBe(id);

    // Where it came from (a reply target) stays in the session's object: never in an export.
    const exported = await bodyText(await call(`/v1/sessions/${id}/export?format=jsonl`));
    expect(exported).toContain('"handoffFrom":"telegram"');
    expect(exported).not.toContain("handoffOrigin");

    // Answered in Slack with the history from Telegram.
    await toSlack(sl.dm("and what about hotels?", "U1022", "DU1022"));
    await settle();
    const asked = conversation(llm.calls.at(-1)!.body).map((m) => textOf(m.content));
    expect(asked[0]).toBe("plan a trip to Lisbon");
    expect(asked.at(-1)).toBe("and what about hotels?");
    expect(slack.texts("DU1022").at(-1)).toBe("echo: and what about hotels?");

    // The Telegram chat starts afresh, and /resume there lists the session (its owner's, wherever it is now).
    await toTelegram(tg.dm("something else", 1022));
    await settle();
    expect(await sessionFor(tgDm(1022))).not.toBe(id);
    await tgCommand("resume", "", 1022);
    expect(telegram.texts(1022).at(-1)).toContain(id);
  });

  it("Slack → Discord home: an admin moves their DM session to Discord's home channel, in a fresh thread", async () => {
    await setHome(db(env), "discord", { chatId: "3025", threadId: null, chatName: null, setBy: "2025" });
    await toSlack(sl.dm("draft the release notes", "U1025", "D1025"));
    await settle();
    const key = `agent:main:slack:dm:${SLACK_TEST.team}:D1025`;
    const id = (await sessionFor(key))!;
    await toSlack(sl.slash("handoff discord home", "U1025", "D1025"));
    await settle();
    const h = await handoffOf(id);
    expect(h).toMatchObject({ state: "completed", platform: "discord", from: "slack" });
    const thread = h!.destination!.thread_id!;
    expect(discord.calls.some((c) => c.path.endsWith(`/channels/3025/messages`))).toBe(true);
    expect(await routeOf(`agent:main:discord:thread:${thread}:${thread}`)).toBe(id);
    expect(slack.responses().at(-1)).toContain("This session moved to the Discord home channel");
    expect(await sessionFor(key)).toBeNull();
  });

  it("Discord → CLI: an admin parks the session for the operator's CLI; the DM is unbound and told how to get it back", async () => {
    await toDiscord(dc.command("ask", { prompt: "debug the deploy" }, { dm: true, userId: "2025", channelId: "772025" }));
    await settle();
    const key = "agent:main:discord:dm:772025";
    const id = (await sessionFor(key))!;
    await toDiscord(dc.command("handoff", { to: "cli" }, { dm: true, userId: "2025", channelId: "772025" }));
    await settle();
    expect(await handoffOf(id)).toMatchObject({ state: "completed", platform: "cli", from: "discord", destination: { chat_id: "cli" } });
    expect(discord.contents().at(-1)).toContain("parked for the operator's CLI");
    expect(await sessionFor(key)).toBeNull();
    // The CLI continues it.
    expect((await postTurn(id, "so where were we?")).status).toBe(200);
  });

  it("CLI → WhatsApp: the API hands a session to the DM of the account linked to the operator's CLI", async () => {
    await link([OPERATOR_ACCOUNT.platform, OPERATOR_ACCOUNT.userId], ["whatsapp", "15550001021"]);
    // Inside WhatsApp's 24-hour window: the user wrote first.
    await toWhatsApp(wa.dm("15550001021", "hi"));
    await settle();
    const id = await newSession("budget review");
    await readEvents(await postTurn(id, "where do we stand?"));
    const res = await call(`/v1/sessions/${id}/handoff`, { method: "POST", json: { platform: "whatsapp", person: "operator" } });
    expect(res.status).toBe(202);
    await settle();
    expect(await handoffOf(id)).toMatchObject({ state: "completed", platform: "whatsapp", from: null, destination: { chat_id: "15550001021" } });
    expect(whatsapp.texts("15550001021").at(-1)).toContain("handed off from the CLI to this whatsapp chat");
    expect(await routeOf("agent:main:whatsapp:dm:15550001021")).toBe(id);

    const nobody = await call(`/v1/sessions/${id}/handoff`, { method: "POST", json: { platform: "slack", person: "operator" } });
    expect(nobody.status).toBe(422);
    expect(((await nobody.json()) as { error: { code: string } }).error.code).toBe("no_direct_chat");
  });
});

describe("/handoff refusals change nothing", () => {
  it("only the owner moves a per-user session, only an admin a shared one or to the CLI, and only to a linked account", async () => {
    await toTelegram(tg.dm("mine", 1023));
    await settle();
    const id = (await sessionFor(tgDm(1023)))!;
    // Someone else's chat bound to it (as a resume by the wrong person would): not theirs to move.
    await link(["telegram", "1024"], ["slack", "U1023"]);
    await bind(tgDm(1024), id);
    await tgCommand("handoff", "slack", 1024);
    expect(telegram.texts(1024).at(-1)).toBe("Only the owner of this session may move it.");
    await tgCommand("handoff", "cli", 1023);
    expect(telegram.texts(1023).at(-1)).toContain("Only TELEGRAM_ADMIN_USERS may hand a session to the operator's CLI");
    await tgCommand("handoff", "discord", 1023);
    expect(telegram.texts(1023).at(-1)).toContain("You have no linked Discord account: send /link here");
    await tgCommand("handoff", "irc", 1023);
    expect(telegram.texts(1023).at(-1)).toContain("Unknown platform 'irc'");
    expect(await handoffOf(id)).toBeNull();
    expect(await sessionFor(tgDm(1023))).toBe(id);

    // A shared session (a forum topic everyone in it uses): admins only.
    const inTopic = (text: string, entity: "mention" | "bot_command", userId: number) => {
      const u = tg.topic(text, 501, { userId, chatId: -100925 });
      const length = entity === "mention" ? TELEGRAM_TEST.username.length + 1 : text.split(" ")[0]!.length;
      return { ...u, message: { ...u.message, entities: [{ type: entity, offset: 0, length }] } };
    };
    await toTelegram(inTopic(`@${TELEGRAM_TEST.username} hello all`, "mention", 1023));
    await settle();
    const shared = (await sessionFor("agent:main:telegram:group:-100925:501"))!;
    expect(shared).toBeTruthy();
    await toTelegram(inTopic(`/handoff@${TELEGRAM_TEST.username} slack`, "bot_command", 1023));
    await settle();
    expect(telegram.texts(-100925).at(-1)).toBe("This session is shared (everyone in this thread uses it): only TELEGRAM_ADMIN_USERS may move it.");
    expect(await handoffOf(shared)).toBeNull();
  });

  it("a crash mid-handoff from a chat: failed by the reclaim, the destination unbound, the chat keeps the session and is told", async () => {
    await link(["telegram", "1021"], ["discord", "2021"]);
    await toTelegram(tg.dm("long story", 1021));
    await settle();
    const id = (await sessionFor(tgDm(1021)))!;
    llm.hold(["summary in progress "], ["never"]);
    await tgCommand("handoff", "discord", 1021);
    const dmKey = "agent:main:discord:dm:772021";
    for (let i = 0; i < 1000 && (await routeOf(dmKey)) !== id; i++) await env.SESSION_AGENT.getByName(id).status();
    expect(await routeOf(dmKey)).toBe(id);
    await abortAllDurableObjects();

    await runMaintenance(env, Date.now() + HANDOFF_LEASE_MS + 1000);
    await settle();
    expect(await handoffOf(id)).toMatchObject({ state: "failed", error: STALE_HANDOFF_ERROR });
    expect(await routeOf(dmKey)).toBeNull();
    expect(await sessionFor(tgDm(1021))).toBe(id);
    expect(telegram.texts(1021).at(-1)).toBe(`The handoff to discord failed: ${STALE_HANDOFF_ERROR}. The session stays here.`);
    expect((await messages(id)).filter((m) => m.role === "user").map((m) => m.content)).toEqual(["long story"]);
    llm.reset();
    await toTelegram(tg.dm("still there?", 1021));
    await settle();
    expect(telegram.texts(1021).at(-1)).toBe("echo: still there?");
  });
});
