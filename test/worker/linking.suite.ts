import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { reserveTurn } from "../../workers/db/budget.ts";
import { issueCode, joinAccounts, LINK_CODE_TTL_MS, linkedAccounts, MAX_GUESSES } from "../../workers/db/people.ts";
import { usedToday } from "../../workers/db/usage.ts";
import { dc, sl, tg } from "../support/fixtures.ts";
import { call } from "./helpers.ts";
import { settle, tgCommand, toDiscord, toSlack, toTelegram } from "./platform-helpers.ts";
import { discord, slack, telegram } from "./setup.ts";

// Users 1031-1035 (Telegram; 1035 an admin), U1031-U1033 (Slack) and 2031-2033 (Discord) are this file's (vitest.config.ts).

const codeIn = (text: string | undefined) => /link code: ([A-Z0-9]{4}-[A-Z0-9]{4})/.exec(text ?? "")?.[1] ?? null;

async function tgLink(userId: number, args = ""): Promise<string> {
  await tgCommand("link", args, userId);
  return telegram.texts(userId).at(-1) ?? "";
}

/** What a refusal answered inline (in the webhook's own answer), if anything. */
async function inline(res: Response): Promise<string | null> {
  const text = await res.text();
  if (!text.startsWith("{")) return null;
  const body = JSON.parse(text) as { text?: string; data?: { content?: string } };
  return body.text ?? body.data?.content ?? null;
}

/** A Slack slash command (in the user's DM unless `channel` says otherwise): its answer, inline or posted. */
async function slackSays(text: string, user: string, channel = `D${user.slice(1)}`): Promise<string> {
  const now = await inline(await toSlack(sl.slash(text, user, channel)));
  await settle();
  return now ?? slack.responses().at(-1) ?? "";
}

/** A Discord command in the user's DM: its answer, inline or posted. */
async function discordSays(name: string, options: Record<string, string>, userId: string): Promise<string> {
  const now = await inline(await toDiscord(dc.command(name, options, { dm: true, userId, channelId: `77${userId}` })));
  await settle();
  // Markdown escapes (DISCORD\_ADMIN\_USERS) read back as the text.
  return (now ?? discord.contents().at(-1) ?? "").replace(/\\_/g, "_");
}

const linked = async (platform: string, userId: string) => (await linkedAccounts(env.DB, { platform, userId })).map((a) => `${a.platform}:${a.userId}`).sort();

describe("linked identities", () => {
  it("a /link code from Telegram joins the Slack account that sends it; /whoami lists the other side; the code works once", async () => {
    const code = codeIn(await tgLink(1031));
    expect(code).not.toBeNull();
    expect(await slackSays(`link ${code}`, "U1031")).toBe("Linked. You are also Telegram user 1031. /whoami lists your accounts.");
    expect(await linked("slack", "U1031")).toEqual(["slack:U1031", "telegram:1031"]);

    await tgCommand("whoami", "", 1031);
    expect(telegram.texts(1031).at(-1)).toBe("You are Telegram user 1031. You may use this bot.\nLinked: Slack user U1031. (/unlink <platform> undoes one.)");
    expect(await slackSays("whoami", "U1031")).toContain("Linked: Telegram user 1031.");

    // Single-use: the same code from another account is just wrong.
    expect(await slackSays(`link ${code}`, "U1032")).toContain("That code is wrong, used or expired");
    expect(await linked("slack", "U1032")).toEqual([]);

    // /unlink undoes it, from either side.
    await tgCommand("unlink", "slack", 1031);
    expect(telegram.texts(1031).at(-1)).toBe("Unlinked Slack user U1031.");
    expect(await linked("telegram", "1031")).toEqual([]);
    expect(await slackSays("whoami", "U1031")).toBe("You are Slack user U1031. You may use this bot.");
  });

  it("an expired code is refused like a wrong one, and links nothing", async () => {
    const { code } = await issueCode(env.DB, { platform: "telegram", userId: "1032" }, Date.now() - LINK_CODE_TTL_MS - 1);
    expect(await slackSays(`link ${code}`, "U1032")).toContain("That code is wrong, used or expired");
    expect(await linked("telegram", "1032")).toEqual([]);
  });

  it(`guesses are throttled per account: after ${MAX_GUESSES} wrong codes even a right one is refused, and stays usable by others`, async () => {
    const code = codeIn(await tgLink(1033));
    for (let i = 0; i < MAX_GUESSES; i++) expect(await slackSays("link AAAA-AAAA", "U1033")).toContain("wrong");
    expect(await slackSays(`link ${code}`, "U1033")).toMatch(/^Too many wrong codes: try again in \d+ min\.$/);
    expect(await linked("slack", "U1033")).toEqual([]);
    // The throttled account did not use it up: another of the same person's accounts can.
    expect(await discordSays("link", { code: code! }, "2033")).toContain("Linked. You are also Telegram user 1033.");
  });

  it("both sides must be allowed users: a code from someone not (or no longer) allowed links nothing, and they cannot ask for one", async () => {
    const { code } = await issueCode(env.DB, { platform: "telegram", userId: "1077" }, Date.now());
    expect(await slackSays(`link ${code}`, "U1032")).toBe("Not linked: Telegram user 1077 is not an allowed user any more.");
    expect(await linked("slack", "U1032")).toEqual([]);

    await toTelegram(tg.command("link", "", 1078));
    await settle();
    expect(telegram.texts(1078).at(-1)).toContain("not allowed to use this bot");
    expect(telegram.texts(1078).join("\n")).not.toContain("link code");
  });

  it("/link works only in a DM (a code shown in a group could be taken by anyone there)", async () => {
    expect(await slackSays("link", "U1032", "C1032")).toContain("works only in these chats: dm");
  });

  it("a link never makes anyone an admin: a Discord user linked to a Telegram admin may not /sethome or hand off to a home channel", async () => {
    await joinAccounts(env.DB, { platform: "telegram", userId: "1035" }, { platform: "discord", userId: "2032" }, Date.now(), () => "person_admin_test");
    expect(await discordSays("sethome", {}, "2032")).toContain("only DISCORD_ADMIN_USERS may set the home channel");
    expect(await discordSays("handoff", { to: "telegram home" }, "2032")).toContain("Only DISCORD_ADMIN_USERS may hand a session to a home channel");
  });

  it("hermes-edge link: POST /v1/links links the operator's CLI to the account that asked for the code; GET /v1/people shows it", async () => {
    const code = codeIn(await tgLink(1034));
    const bad = await call("/v1/links", { method: "POST", json: { code: "ZZZZ-ZZZZ" } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe("wrong_code");

    const res = await call("/v1/links", { method: "POST", json: { code } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { person: { id: string; accounts: Array<{ platform: string; user_id: string; admin: boolean }> } };
    // (The operator's CLI may be linked to other platforms' accounts by other files' tests.)
    expect(body.person.accounts.map((a) => `${a.platform}:${a.user_id}`)).toEqual(expect.arrayContaining(["cli:operator", "telegram:1034"]));
    const { people } = (await (await call("/v1/people")).json()) as { people: Array<{ id: string; accounts: unknown[] }> };
    expect(people.find((p) => p.id === body.person.id)?.accounts).toHaveLength(body.person.accounts.length);
  });
});

describe("a person's DAILY_TOKEN_BUDGET counts all their accounts", () => {
  it("a turn of one account is refused once the person's other account used the day's tokens; an unlinked account is not", async () => {
    const day = "2026-12-02";
    const now = Date.UTC(2026, 11, 2, 12);
    await joinAccounts(env.DB, { platform: "slack", userId: "U9001" }, { platform: "discord", userId: "9002" }, now, () => "person_budget_test");
    await env.DB.prepare(
      "INSERT INTO usage (turn_id, session_id, user_key, day, input_tokens, output_tokens, created_at) VALUES ('t-budget-1', 's-budget', 'slack:U9001', ?1, 40000, 20000, ?2)",
    )
      .bind(day, now)
      .run();
    expect(await usedToday(env.DB, "discord:9002", day)).toBe(60_000);
    const reserve = (userKey: string) => reserveTurn(env.DB, { turnId: `t-${userKey}`, sessionId: "s-x", userKey, day, budget: 50_000, reserve: 1000, now });
    expect(await reserve("discord:9002")).toEqual({ ok: false, used: 60_000, held: 60_000 });
    expect(await reserve("discord:9003")).toEqual({ ok: true });
  });
});
