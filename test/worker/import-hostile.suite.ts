import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { IMPORTED_IN_FLIGHT_ERROR } from "../../durable-objects/session-agent/lifecycle.ts";
import { runMaintenance } from "../../workers/maintenance.ts";
import { exportBody, exportMessageLine, exportSessionLine } from "../support/export-lines.ts";
import { bodyText, call, newSession, postTurn, readEvents } from "./helpers.ts";
import { llm, telegram } from "./setup.ts";

let n = 0;
const freshId = () => `20261201_000000_imp${Date.now().toString(36)}${n++}`;
const agent = (id: string) => env.SESSION_AGENT.getByName(id);

const sessionLine = exportSessionLine;
const message = exportMessageLine;
const body = exportBody;
const importBody = (text: string) => call("/v1/sessions/import", { method: "POST", body: text });

async function usageOf(id: string): Promise<{ turns: number; input_tokens: number; output_tokens: number } | undefined> {
  const { usage } = (await (await call("/v1/usage?group=session")).json()) as {
    usage: Array<{ key: string; turns: number; input_tokens: number; output_tokens: number }>;
  };
  return usage.find((u) => u.key === id);
}

describe("regression: an import reusing another session's turn ids zeroed that session's usage", () => {
  it("the victim's usage stays as it was; the imported turns are counted under fresh ids in their own session", async () => {
    const victim = await newSession("victim");
    llm.then({ kind: "text", chunks: ["ok"], usage: { prompt_tokens: 700, completion_tokens: 30 } });
    await readEvents(await postTurn(victim, "spend some tokens"));
    await agent(victim).idle();
    expect(await usageOf(victim)).toMatchObject({ turns: 1, input_tokens: 700, output_tokens: 30 });
    const turnId = (await env.DB.prepare("SELECT turn_id FROM usage WHERE session_id = ?").bind(victim).first<{ turn_id: string }>())!.turn_id;

    const id = freshId();
    const usage = { turnId, session: victim, userKey: "cli", day: "2026-12-01", input: 0, output: 0, createdAt: 1 };
    const res = await importBody(body(sessionLine(id), message(id, 1, turnId), { type: "usage", session_id: id, usage }));
    expect(res.status).toBe(201);
    expect(await usageOf(victim)).toMatchObject({ turns: 1, input_tokens: 700, output_tokens: 30 });
    const mine = await env.DB.prepare("SELECT turn_id, session_id FROM usage WHERE session_id = ?").bind(id).all<{ turn_id: string }>();
    expect(mine.results).toHaveLength(1);
    expect(mine.results[0]!.turn_id).not.toBe(turnId);
  });
});

describe("regression: an imported in-flight handoff was carried out by the next cron run", () => {
  it("pending becomes failed with the reason, nothing is posted, and no running turn blocks the session", async () => {
    const id = freshId();
    const sent = telegram.calls.length;
    const hostile = sessionLine(id, {
      handoffState: "pending",
      handoffPlatform: "telegram",
      handoffChatId: "-100999",
      handoffRequestedAt: 1,
      activeTurnId: "t-stuck",
      turnStartedAt: 1,
      handoffDestKey: "agent:main:telegram:dm:1002",
      handoffDestUrl: "javascript:alert(1)",
    });
    expect((await importBody(body(hostile))).status).toBe(201);
    await runMaintenance(env, Date.now() + 60_000);
    await agent(id).idle();
    const { handoff } = (await (await call(`/v1/sessions/${id}/handoff`)).json()) as {
      handoff: { state: string; error: string; destination: { url: string | null } | null };
    };
    expect(handoff).toMatchObject({ state: "failed", error: IMPORTED_IN_FLIGHT_ERROR });
    expect(handoff.destination?.url ?? null).toBeNull();
    expect(telegram.calls.slice(sent).filter((c) => JSON.stringify(c.body).includes("-100999"))).toEqual([]);
    const { session } = (await (await call(`/v1/sessions/${id}`)).json()) as { session: { running: boolean } };
    expect(session.running).toBe(false);
    expect((await postTurn(id, "still usable?")).status).toBe(200);
  });
});

describe("regression: imports skipped PATCH's limits and the checks on tool calls and nesting", () => {
  it("instructions and titles over PATCH's limits are refused (910,000 characters were stored)", async () => {
    expect((await importBody(body(sessionLine(freshId(), { instructions: "x".repeat(910_000) })))).status).toBe(400);
    expect((await importBody(body(sessionLine(freshId(), { title: "t".repeat(201) })))).status).toBe(400);
  });

  it("tool_calls: [null, 42] is refused (it made every later turn fail)", async () => {
    const id = freshId();
    const res = await importBody(body(sessionLine(id), message(id, 1, "t1", { role: "assistant", content: null, tool_calls: [null, 42] })));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/line 2: message\.tool_calls/);
  });

  it("deep nesting answers 400, not 500", async () => {
    const deep = `{"type":"session","version":1,"session":{"id":"${freshId()}","source":"cli","startedAt":1,"lastActiveAt":1,"x":${"[".repeat(20_000)}${"]".repeat(20_000)}}}`;
    const res = await importBody(deep);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain("nested deeper");
    // A nested value that is not deep is still not a column's value.
    expect((await importBody(body(sessionLine(freshId(), { x: { y: 1 } })))).status).toBe(400);
  });

  it("an attachment naming another session's stored file keeps its note but not the file", async () => {
    const id = freshId();
    const attachment = {
      turnId: "t1",
      index: 0,
      kind: "document",
      name: "secret.pdf",
      mime: "application/pdf",
      size: 1,
      seconds: null,
      status: "inlined",
      key: "sessions/someone-else/t9/0-secret.pdf",
      detail: null,
      note: "[document secret.pdf]",
      createdAt: 1,
    };
    expect((await importBody(body(sessionLine(id), message(id, 1, "t1"), { type: "attachment", session_id: id, attachment }))).status).toBe(201);
    const exported = await bodyText(await call(`/v1/sessions/${id}/export`));
    expect(exported).toContain("[document secret.pdf]");
    expect(exported).not.toContain("someone-else");
  });
});
