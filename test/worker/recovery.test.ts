import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { RESTART_FAILURE } from "../../durable-objects/session-agent.ts";
import { messages, newSession, openTurn, session } from "./helpers.ts";
import { llm } from "./setup.ts";

const agent = (id: string) => env.SESSION_AGENT.get(env.SESSION_AGENT.idFromName(id));

describe("an accepted turn survives the object restarting mid-turn", () => {
  it("runs the turn again once, from the stored input", async () => {
    const id = await newSession();
    llm.hold(["half "], ["never"]);
    const turn = await openTurn(id, "remember me");
    expect(await turn.next()).toMatchObject({ event: "delta" });

    await abortAllDurableObjects();
    await turn.rest().catch(() => undefined); // the caller's stream dies with the object
    expect(await session(id)).toMatchObject({ running: true });

    expect(await runDurableObjectAlarm(agent(id))).toBe(true);
    expect(await messages(id)).toMatchObject([
      { role: "user", content: "remember me" },
      { role: "assistant", content: "echo: remember me", finish_reason: "stop" },
    ]);
    expect(await session(id)).toMatchObject({ running: false });
    // The re-run asked the model with the stored user message, once.
    expect(llm.calls.at(-1)!.body.messages.map((m) => m.content)).toEqual(["remember me"]);
  });

  it("records a visible failure instead of running it a third time", async () => {
    const id = await newSession();
    llm.hold(["half "], ["never"]);
    const turn = await openTurn(id, "doomed");
    expect(await turn.next()).toMatchObject({ event: "delta" });
    await abortAllDurableObjects();
    await turn.rest().catch(() => undefined);
    // As if the one re-run had also died.
    await runInDurableObject(agent(id), (_instance, state) => {
      state.storage.sql.exec("UPDATE turns SET attempts = 2");
    });
    const callsBefore = llm.calls.length;
    expect(await runDurableObjectAlarm(agent(id))).toBe(true);
    expect(llm.calls.length).toBe(callsBefore);
    expect(await messages(id)).toMatchObject([
      { role: "user", content: "doomed" },
      { role: "assistant", content: RESTART_FAILURE, finish_reason: "error" },
    ]);
    expect(await session(id)).toMatchObject({ running: false });
    expect(await runDurableObjectAlarm(agent(id))).toBe(false);
  });
});
