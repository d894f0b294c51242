import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { db } from "../../workers/db/client.ts";
import { setHome, storedHome } from "../../workers/db/platform-state.ts";
import { call, newSession } from "./helpers.ts";
import { routeOf, tgCommand } from "./platform-helpers.ts";
import { telegram } from "./setup.ts";

interface HomeJson {
  chat_id: string;
  source: string;
  set_by: string | null;
  set_at: number | null;
  handoff_to: string;
  refused: string | null;
}

async function telegramHome(): Promise<HomeJson | null> {
  const { platforms } = (await (await call("/v1/platforms")).json()) as { platforms: Array<{ name: string; home_channel: HomeJson | null }> };
  return platforms.find((p) => p.name === "telegram")!.home_channel;
}

describe("regression: an allowed, non-admin user's /sethome took the operator's CLI sessions into their DM", () => {
  it("/sethome from a user not in TELEGRAM_ADMIN_USERS is refused, naming the setting, and the home stays", async () => {
    await setHome(db(env), "telegram", { chatId: "-100881", threadId: null, chatName: null, setBy: "1007" }, Date.UTC(2026, 11, 1, 9));
    await tgCommand("sethome", "", 1002);
    expect(telegram.texts(1002).at(-1)).toContain("only TELEGRAM_ADMIN_USERS may set the home channel");
    expect(await storedHome(db(env), "telegram")).toMatchObject({ chatId: "-100881", setBy: "1007" });

    // Who set it and when, and where a handoff would land, before anyone queues one.
    expect(await telegramHome()).toMatchObject({
      chat_id: "-100881",
      source: "sethome",
      set_by: "1007",
      set_at: Date.UTC(2026, 11, 1, 9),
      handoff_to: "telegram chat -100881, thread: new topic; home set by /sethome from user 1007 on 2026-12-01",
      refused: null,
    });
  });

  it("an admin's /sethome is taken, with who and when", async () => {
    await tgCommand("sethome", "", 1007);
    expect(telegram.texts(1007).at(-1)).toContain("home channel");
    const home = await telegramHome();
    expect(home).toMatchObject({ chat_id: "1007", source: "sethome", set_by: "1007" });
    expect(typeof home!.set_at).toBe("number");
  });

  it("a home a non-admin set before the fix is refused at request time, before the session is touched", async () => {
    // As stored by a /sethome before it was admin-only.
    await setHome(db(env), "telegram", { chatId: "1002", threadId: null, chatName: null, setBy: "1002" });
    expect((await telegramHome())!.refused).toContain("not in TELEGRAM_ADMIN_USERS");
    const id = await newSession("operator secrets");
    const res = await call(`/v1/sessions/${id}/handoff`, { method: "POST", json: { platform: "telegram" } });
    expect(res.status).toBe(422);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("no_home_channel");
    expect(body.error.message).toContain("set by user 1002, who is not in TELEGRAM_ADMIN_USERS");
    // Nothing was queued, and the user's DM is not bound to the CLI session.
    expect(await (await call(`/v1/sessions/${id}/handoff`)).json()).toEqual({ handoff: null });
    expect(await routeOf("agent:main:telegram:dm:1002")).not.toBe(id);
  });
});
