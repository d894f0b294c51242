import { describe, expect, it } from "vitest";
import { helpText } from "../../workers/conversations/texts.ts";
import { CHAT_COMMANDS, COMMANDS, mayRun, type Audience, type ChatCommandSpec, type CommandName } from "../../workers/platforms/commands.ts";
import { DISCORD_COMMANDS } from "../../workers/platforms/discord/parse.ts";
import { slackManifest } from "../../workers/platforms/slack/manifest.ts";
import { telegramMenu } from "../../workers/platforms/telegram/setup.ts";
import type { ChatType } from "../../workers/platforms/types.ts";

/** The chat-command table feeds every list of commands: each one names exactly the table's commands, in its order. */
describe("the chat-command table", () => {
  const names = CHAT_COMMANDS.map((c) => c.name);

  it("/help lists every command of the table, with its argument, one line each", () => {
    const lines = helpText({ prefix: "/", howToTalk: "Just write." }).split("\n");
    expect(lines[0]).toBe("Just write.");
    expect(lines.slice(1).map((l) => /^\/(\w+)/.exec(l)?.[1])).toEqual(names);
    expect(lines).toContain("/resume <id or title>: continue an earlier session here (no argument: list the ones you may resume)");
    expect(helpText({ prefix: "/hermes ", howToTalk: "x" })).toContain("/hermes instructions [text|clear]: ");
  });

  it("Discord registers /ask, every command of the table (its argument as the option the parser reads) and the message command", () => {
    const chat = DISCORD_COMMANDS.filter((c) => c.name !== "ask" && !("type" in c));
    expect(chat.map((c) => c.name)).toEqual(names);
    expect(DISCORD_COMMANDS[0]!.name).toBe("ask");
    expect(DISCORD_COMMANDS.at(-1)).toMatchObject({ type: 3 });
    for (const spec of CHAT_COMMANDS as readonly ChatCommandSpec[]) {
      const registered = chat.find((c) => c.name === spec.name) as { description?: string; options?: unknown };
      expect(registered.description).toBe(spec.description);
      const { arg } = spec;
      expect(registered.options).toEqual(
        arg ? [{ type: 3, name: arg.name, description: arg.description, required: arg.required, ...(arg.suggest ? { autocomplete: true } : {}) }] : undefined,
      );
    }
  });

  it("Discord's and Telegram's limits hold for every description", () => {
    for (const c of CHAT_COMMANDS) {
      expect(c.description.length, c.name).toBeLessThanOrEqual(100);
      if ("arg" in c) expect(c.arg.description.length, c.name).toBeLessThanOrEqual(100);
      expect(c.name).toMatch(/^[a-z0-9_]{1,32}$/);
    }
  });

  it("the Slack manifest's slash command names every command of the table (compact, instructions and tools were missing)", () => {
    const [slash] = slackManifest("https://w.example").features.slash_commands;
    const listed = slash!.description
      .replace(/^Ask the agent, or: /, "")
      .split(" | ")
      .map((u) => u.split(" ")[0]);
    expect(listed).toEqual(names);
    expect(slash!.description).toContain("resume <id or title>");
  });

  it("Telegram's command menu (setMyCommands) is the table", () => {
    expect(telegramMenu()).toEqual(CHAT_COMMANDS.map((c) => ({ command: c.name, description: c.description })));
    expect(COMMANDS).toEqual(names);
  });
});

describe("the permission check", () => {
  const asker = (allowed: boolean, admin: boolean, chatType: ChatType = "group") => ({ allowed, admin, chatType });
  const byAudience = (who: Audience) => CHAT_COMMANDS.filter((c) => c.who === who).map((c) => c.name as CommandName);

  it("anyone's commands run for people not allowed to use the bot", () => {
    expect(byAudience("anyone").sort()).toEqual(["help", "whoami"]);
    for (const name of byAudience("anyone")) expect(mayRun(name, asker(false, false))).toEqual({ ok: true });
  });

  it("allowed users' commands refuse others as not allowed", () => {
    for (const name of byAudience("allowed")) {
      const place = (CHAT_COMMANDS as readonly ChatCommandSpec[]).find((c) => c.name === name)!.where[0];
      expect(mayRun(name, asker(true, false, place))).toEqual({ ok: true });
      expect(mayRun(name, asker(false, false, place))).toEqual({ ok: false, need: "allowed" });
    }
  });

  it("/link works only in DMs (a code shown in a group could be taken by anyone there)", () => {
    expect(mayRun("link", asker(true, false, "dm"))).toEqual({ ok: true });
    for (const place of ["group", "channel", "thread"] as const) expect(mayRun("link", asker(true, false, place))).toEqual({ ok: false, need: "place" });
  });

  it("/sethome is for admins: an allowed user is refused as no admin, a stranger as not allowed, an admin passes", () => {
    expect(byAudience("admin")).toEqual(["sethome"]);
    expect(mayRun("sethome", asker(true, false))).toEqual({ ok: false, need: "admin" });
    expect(mayRun("sethome", asker(false, false))).toEqual({ ok: false, need: "allowed" });
    expect(mayRun("sethome", asker(true, true))).toEqual({ ok: true });
    expect(mayRun("sethome", asker(false, true, "dm"))).toEqual({ ok: true });
  });
});
