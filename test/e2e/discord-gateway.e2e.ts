import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import message from "../corpus/discord/gateway/message.json" with { type: "json" };
import { harness, type Harness } from "../support/e2e.ts";
import { FAKE_GUILD_ID } from "../support/fake-platforms.ts";

/**
 * Discord's Gateway through the e2e Worker (the deploy bundle in miniflare): the DiscordGateway object opens an outbound
 * WebSocket (fetch with `Upgrade: websocket`) to the fake Gateway on loopback, identifies,
 * and turns MESSAGE_CREATE into turns through the same intake as webhooks.
 */
let h: Harness;
/** The channel handoffs go to (an explicit chat_id: no /sethome needed). */
const HOME = "660000000000000001";
/** In DISCORD_ALLOWED_USERS of the e2e Worker. */
const USER = { id: "2001", username: "gw-user", global_name: "Gateway User" };

beforeAll(async () => {
  h = await harness();
});
beforeEach(() => h.reset());

const api = (path: string, init: RequestInit = {}) =>
  fetch(`${h.worker.url}${path}`, { ...init, headers: { authorization: `Bearer ${h.worker.token}`, "content-type": "application/json" } });

/** A person's message in `channel` (the docs' example message, with our ids), as the Gateway sends it. */
const said = (id: string, channel: string, content: string) => ({
  ...message.payload.d,
  id,
  channel_id: channel,
  guild_id: FAKE_GUILD_ID,
  author: USER,
  content,
});

describe("Discord Gateway end to end", () => {
  it("a handoff to Discord whose thread is answered by a plain message: one turn in that session, the reply a reply to it; a replayed message does nothing", async () => {
    // The object was woken by the Worker's first request (this one, if this suite runs alone).
    expect((await api("/health")).status).toBe(200);
    await h.gateway.until(() => h.gateway.session() !== null);
    expect(h.gateway.sent(2)[0]?.d).toMatchObject({ intents: 37377 });

    const { session } = (await (await api("/v1/sessions", { method: "POST", body: JSON.stringify({ title: "gateway handoff" }) })).json()) as {
      session: { id: string };
    };
    const queued = await api(`/v1/sessions/${session.id}/handoff`, {
      method: "POST",
      body: JSON.stringify({ platform: "discord", chat_id: HOME, thread: true }),
    });
    expect(queued.status).toBe(202);
    let state = "pending";
    let thread: string | null = null;
    while (state === "pending" || state === "running") {
      const r = (await (await api(`/v1/sessions/${session.id}/handoff?wait=20&state=${state}`)).json()) as {
        handoff: { state: string; error: string | null; destination: { thread_id: string | null } | null };
      };
      state = r.handoff.state;
      thread = r.handoff.destination?.thread_id ?? null;
      if (state === "failed") throw new Error(`handoff failed: ${r.handoff.error}`);
    }
    expect(thread).not.toBeNull();
    const threadId = thread ?? "";

    // A plain message in the thread (no mention, no /ask): MESSAGE_CREATE carries no channel_type
    // here, so the object asks GET /channels/{id} once and learns it is a thread.
    h.gateway.dispatch("MESSAGE_CREATE", said("4001", threadId, "continue here please"));
    const reply = await h.discord.waitFor(
      (c) => c.method === "POST" && c.path.endsWith(`/channels/${threadId}/messages`) && c.body.content === "echo: continue here please",
    );
    expect(reply.body).toMatchObject({ allowed_mentions: { parse: [] }, message_reference: { message_id: "4001", fail_if_not_exists: false } });
    expect(h.discord.called("/typing").length).toBeGreaterThan(0);

    // The same message again (a resume's replay), then another: only the other becomes a turn.
    h.gateway.dispatch("MESSAGE_CREATE", said("4001", threadId, "continue here please"));
    h.gateway.dispatch("MESSAGE_CREATE", said("4002", threadId, "and one more"));
    await h.discord.waitFor((c) => c.method === "POST" && c.body.content === "echo: and one more");
    expect(h.discord.contents().filter((t) => t === "echo: continue here please")).toHaveLength(1);
    const { messages } = (await (await api(`/v1/sessions/${session.id}/messages`)).json()) as { messages: Array<{ role: string; content: string }> };
    expect(messages.filter((m) => m.role === "user" && m.content.includes("continue here please"))).toHaveLength(1);
    expect(messages.filter((m) => m.role === "user" && m.content.includes("and one more"))).toHaveLength(1);

    const status = (await (await api("/v1/platforms")).json()) as {
      platforms: Array<{ name: string; connection?: { state: string; resumes: number } | null }>;
    };
    expect(status.platforms.find((p) => p.connection)?.connection).toMatchObject({ state: "connected" });
  });

  it("a DM: the reply streams as a reply to the message, and !stop typed as a message stops it", async () => {
    await h.gateway.until(() => h.gateway.live() !== null && h.gateway.session() !== null);
    const dm = "650000000000000002";
    const message = (id: string, content: string) => ({ ...said(id, dm, content), guild_id: undefined });
    h.llm.hold(["working on it "], ["never"]);
    h.gateway.dispatch("MESSAGE_CREATE", message("4101", "a long job"));
    const first = await h.discord.waitFor((c) => c.method === "POST" && c.path.endsWith(`/channels/${dm}/messages`));
    expect(first.body).toMatchObject({ content: "working on it", message_reference: { message_id: "4101" } });
    h.gateway.dispatch("MESSAGE_CREATE", message("4102", "!stop"));
    await h.discord.waitFor((c) => c.method === "POST" && c.path.endsWith(`/channels/${dm}/messages`) && c.body.content === "Stopped.");
  });
});
