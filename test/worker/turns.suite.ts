import { describe, expect, it } from "vitest";
import { call, deltas, messages, newSession, openTurn, postTurn, readEvents, session } from "./helpers.ts";
import { llm } from "./setup.ts";
import { conversation } from "../support/fake-llm.ts";

describe("turns", () => {
  it("streams deltas then done, and stores the user and assistant messages", async () => {
    const id = await newSession();
    llm.text("Hel", "lo ", "there");
    const res = await postTurn(id, "say hello");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const events = await readEvents(res);
    expect(events.map((e) => e.event)).toEqual(["delta", "delta", "delta", "done"]);
    expect(deltas(events)).toBe("Hello there");
    expect(JSON.parse(events.at(-1)!.data)).toEqual({ finish_reason: "stop" });
    expect(await messages(id)).toMatchObject([
      { role: "user", content: "say hello" },
      { role: "assistant", content: "Hello there", finish_reason: "stop" },
    ]);
    expect(await session(id)).toMatchObject({ running: false, title: "say hello", message_count: 2 });
    expect(llm.calls[0]!.authorization).toBe("Bearer test-llm-key");
    expect(llm.calls[0]!.body).toMatchObject({ model: "fake-model", stream: true });
  });

  it("replays the first exchange in the second turn's model request", async () => {
    const id = await newSession();
    await readEvents(await postTurn(id, "my name is Ada"));
    await readEvents(await postTurn(id, "what is my name?"));
    expect(llm.calls).toHaveLength(2);
    expect(llm.calls[1]!.body.messages[0]!.role).toBe("system");
    expect(conversation(llm.calls[1]!.body).map((m) => [m.role, m.content])).toEqual([
      ["user", "my name is Ada"],
      ["assistant", "echo: my name is Ada"],
      ["user", "what is my name?"],
    ]);
  });

  it("answers 409 turn_in_progress while a turn runs, and stores nothing for it", async () => {
    const id = await newSession();
    const gate = llm.hold();
    const first = await openTurn(id, "long one");
    expect(await first.next()).toMatchObject({ event: "delta" });
    expect(await session(id)).toMatchObject({ running: true });
    const second = await postTurn(id, "me too");
    expect(second.status).toBe(409);
    expect(await second.json()).toEqual({ error: { code: "turn_in_progress", message: expect.any(String) } });
    gate.release();
    await first.rest();
    expect((await messages(id)).map((m) => m.content)).toEqual(["long one", "partial rest"]);
  });

  it("interrupt stops the turn at once, keeps the partial reply, and leaves other sessions running", async () => {
    const [a, b] = [await newSession("a"), await newSession("b")];
    const gateA = llm.hold(["half of A "], ["never sent"]);
    const gateB = llm.hold(["half of B "], ["and the rest of B"]);
    const turnA = await openTurn(a, "tell A");
    expect(await turnA.next()).toEqual({ event: "delta", data: JSON.stringify({ text: "half of A " }) });
    const turnB = await openTurn(b, "tell B");
    expect(await turnB.next()).toMatchObject({ event: "delta" });

    const stop = await call(`/v1/sessions/${a}/interrupt`, { method: "POST" });
    expect(await stop.json()).toEqual({ interrupted: true });
    // A is never released: only the interrupt can end its stream, and it ends as interrupted.
    const restA = await turnA.rest();
    expect(restA).toEqual([{ event: "done", data: JSON.stringify({ finish_reason: "interrupted" }) }]);
    expect(gateA.cancelled).toBe(true);

    expect(await session(b)).toMatchObject({ running: true });
    expect(gateB.cancelled).toBe(false);
    gateB.release();
    expect(deltas(await turnB.rest())).toBe("and the rest of B");

    expect(await messages(a)).toMatchObject([
      { role: "user", content: "tell A" },
      { role: "assistant", content: "half of A ", finish_reason: "interrupted" },
    ]);
    expect(await session(a)).toMatchObject({ running: false });
    const again = await call(`/v1/sessions/${a}/interrupt`, { method: "POST" });
    expect(await again.json()).toEqual({ interrupted: false });
  });
});

describe("provider failures reach the caller as typed errors", () => {
  it.each([
    [{ kind: "http", status: 401, body: JSON.stringify({ error: { message: "bad key" } }) }, "provider_auth"],
    [{ kind: "http", status: 400, body: JSON.stringify({ error: { message: "no such model" } }) }, "provider_rejected"],
    [{ kind: "garbage" }, "provider_bad_stream"],
  ] as const)("%o → %s", async (reply, code) => {
    const id = await newSession();
    llm.then(reply);
    const events = await readEvents(await postTurn(id, "hi"));
    expect(events.at(-1)!.event).toBe("error");
    expect(JSON.parse(events.at(-1)!.data)).toMatchObject({ code, message: expect.any(String) });
    expect(await session(id)).toMatchObject({ running: false });
  });

  it("retries a 503 that asks for it, then answers", async () => {
    const id = await newSession();
    llm.then({ kind: "http", status: 503, body: "{}", headers: { "retry-after": "0" } });
    const events = await readEvents(await postTurn(id, "hi"));
    expect(deltas(events)).toBe("echo: hi");
    expect(llm.calls).toHaveLength(2);
  });
});
