import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createSession } from "../../workers/conversations/new-session.ts";
import { seedFor } from "../../workers/conversations/sessions.ts";
import { newSessionId } from "../../workers/db/ids.ts";
import { call, newSession } from "./helpers.ts";

describe("regression: session ids had 24 random bits, and a colliding id joined the existing session", () => {
  it("ids carry at least 64 random bits", () => {
    const id = newSessionId(Date.UTC(2026, 11, 1));
    expect(id).toMatch(/^20261201_000000_[0-9a-f]{16}$/);
  });

  it("a new session whose id is taken gets another id; the existing one is untouched", async () => {
    const existing = await newSession("someone else's");
    const ids = [existing, `${existing}x`];
    const made = await createSession(env, { source: "cli", title: "mine", model: "fake" }, Date.now, () => ids.shift()!);
    expect(made.id).toBe(`${existing}x`);
    expect(made.title).toBe("mine");
    const { session } = (await (await call(`/v1/sessions/${existing}`)).json()) as { session: { title: string } };
    expect(session.title).toBe("someone else's");
  });

  it("a platform chat's first message whose freshly made id names an existing session is refused (exists), never joined", async () => {
    const existing = await newSession("the operator's");
    const source = { platform: "telegram" as const, chatId: "1009", chatType: "dm" as const, userId: "1009", userName: null, threadId: null };
    const res = await env.SESSION_AGENT.getByName(existing).enqueue({
      content: "let me in",
      target: { platform: "telegram", private: true, ref: "{}" },
      deliveryKey: "telegram:collision",
      seed: seedFor(env, source, "agent:main:telegram:dm:1009"),
    });
    expect(res).toEqual({ ok: false, code: "exists" });
    const { messages } = (await (await call(`/v1/sessions/${existing}/messages`)).json()) as { messages: Array<{ content: string }> };
    expect(messages.map((m) => m.content)).not.toContain("let me in");
  });
});
