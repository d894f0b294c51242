import { describe, expect, it } from "vitest";
import { refusalText } from "../../workers/conversations/texts.ts";
import { dc } from "../support/fixtures.ts";
import { conversation } from "../support/fake-llm.ts";
import { discordHeaders } from "../support/signing.ts";
import { deliver, routeOf, settle, toDiscord } from "./platform-helpers.ts";
import { discord, llm } from "./setup.ts";

describe("Discord interactions webhook", () => {
  it("refuses a forged, missing or stale-keyed signature with 401", async () => {
    const body = JSON.stringify(dc.ping());
    const good = await discordHeaders(body);
    const forged = { ...good, "x-signature-ed25519": good["x-signature-ed25519"]!.replace(/^./, (ch) => (ch === "a" ? "b" : "a")) };
    const cases: Array<Record<string, string>> = [forged, { "content-type": "application/json" }, { ...good, "x-signature-timestamp": "1" }];
    for (const headers of cases) expect((await deliver("discord", body, headers)).status).toBe(401);
    expect((await deliver("discord", `${body} `, good)).status).toBe(401);
    expect(discord.calls).toEqual([]);
  });

  it("refuses a correctly signed interaction whose timestamp is old (regression: an old signed /sethome was replayed)", async () => {
    const body = JSON.stringify(dc.command("sethome"));
    const old = await discordHeaders(body, String(Math.floor(Date.now() / 1000) - 301));
    const res = await deliver("discord", body, old);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: { code: "unauthorized", message: "webhook timestamp outside the accepted window" } });
    expect(discord.calls).toEqual([]);
  });

  it("verifies the raw bytes: a signed PING carrying bytes that are not valid UTF-8 gets its PONG (regression: 401)", async () => {
    const enc = (t: string) => new TextEncoder().encode(t);
    const invalid = new Uint8Array([...enc('{"type":1,"id":"77","application_id":"5550001","token":"t","note":"'), 0xff, 0xfe, ...enc('"}')]);
    const res = await deliver("discord", invalid, await discordHeaders(invalid));
    expect(await res.json()).toEqual({ type: 1 });
  });

  it("answers PING with PONG", async () => {
    const res = await toDiscord(dc.ping());
    expect(await res.json()).toEqual({ type: 1 });
  });

  it("defers /ask at once, then edits @original with the reply", async () => {
    const interaction = dc.command("ask", { prompt: "hello discord" });
    const res = await toDiscord(interaction);
    expect(await res.json()).toEqual({ type: 5 });
    await settle();
    const edit = discord.calls.find((c) => c.method === "PATCH")!;
    expect(edit.path).toBe(`/api/v10/webhooks/5550001/${interaction.token}/messages/@original`);
    expect(edit.body).toMatchObject({ content: "echo: hello discord" });
    expect(await routeOf("agent:main:discord:group:3001:2001")).not.toBeNull();
  });

  it("keys a thread on the thread id, shared by everyone in it", async () => {
    await toDiscord(dc.command("ask", { prompt: "from alice" }, { userId: "2001", thread: { id: "4444", parent: "3001" } }));
    await toDiscord(dc.command("ask", { prompt: "from bob" }, { userId: "2002", thread: { id: "4444", parent: "3001" } }));
    await settle();
    const sessionId = await routeOf("agent:main:discord:thread:4444:4444");
    expect(sessionId).not.toBeNull();
    expect(conversation(llm.calls[1]!.body).map((m) => m.content)).toEqual(["from alice", "echo: from alice", "from bob"]);
  });

  it("sends a reply over 2000 characters as @original plus follow-ups", async () => {
    llm.text("word ".repeat(900));
    const interaction = dc.command("ask", { prompt: "long" });
    await toDiscord(interaction);
    await settle();
    const hook = `/api/v10/webhooks/5550001/${interaction.token}`;
    const posts = discord.calls.filter((c) => c.path.startsWith(hook));
    // The live update edits @original with the first part; the final reply leaves it (it already
    // shows exactly that part) and adds the follow-ups.
    expect(posts.map((c) => c.method)).toEqual(["PATCH", "POST", "POST"]);
    for (const p of posts) expect(String(p.body.content).length).toBeLessThanOrEqual(2000);
  });

  it("answers chat commands privately (a deferred ephemeral response, then edited), and refuses unauthorised users inline with no model call", async () => {
    const stop = dc.command("stop");
    expect(await (await toDiscord(stop)).json()).toEqual({ type: 5, data: { flags: 64 } });
    await settle();
    const edit = discord.calls.find((c) => c.method === "PATCH" && c.path.includes(stop.token))!;
    expect(edit.body).toMatchObject({ content: "Nothing is running here." });
    // /help needs nothing but config: answered in the response itself.
    const help = await toDiscord(dc.command("help"));
    expect(((await help.json()) as { data: { content: string } }).data.content).toContain("/ask");
    const denied = await toDiscord(dc.command("ask", { prompt: "hi" }, { userId: "6666" }));
    // Rendered as Discord Markdown like every reply: the underscores are escaped so they show.
    const refusal = refusalText("discord", "6666").replaceAll("_", "\\_");
    expect(refusal).toContain("DISCORD\\_ALLOWED\\_USERS");
    expect(await denied.json()).toEqual({ type: 4, data: { content: refusal, flags: 64, allowed_mentions: { parse: [] } } });
    await settle();
    expect(llm.calls).toHaveLength(0);
  });
});

describe("Discord bad input", () => {
  it("answers unsupported interaction types ephemerally and answers malformed JSON 400, with no turn", async () => {
    const component = { ...dc.ping(), type: 3 };
    const res = await toDiscord(component);
    expect(await res.json()).toMatchObject({ type: 4, data: { flags: 64 } });
    const body = "{broken";
    // Discord does not retry interactions: a malformed one is a 400, never a 5xx.
    expect((await deliver("discord", body, await discordHeaders(body))).status).toBe(400);
    await settle();
    expect(llm.calls).toHaveLength(0);
  });
});
