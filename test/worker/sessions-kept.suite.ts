import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { SUMMARY_PREFIX } from "../../workers/agent/index.ts";
import { runMaintenance } from "../../workers/maintenance.ts";
import { conversation, textOf } from "../support/fake-llm.ts";
import { dc, sl, tg } from "../support/fixtures.ts";
import { bodyText, call, newSession, postTurn, readEvents } from "./helpers.ts";
import { settle, toDiscord, toSlack, toTelegram } from "./platform-helpers.ts";
import { discord, llm, slack, telegram } from "./setup.ts";

/** Telegram user of this file (allowed in vitest.config.ts); its DM's chat id is the same. */
const TG_USER = 1009;

const agent = (id: string) => env.SESSION_AGENT.getByName(id);

async function json<T>(res: Response, status = 200): Promise<T> {
  expect(res.status, await res.clone().text()).toBe(status);
  return (await res.json()) as T;
}

async function turns(id: string, n: number, prefix = "message"): Promise<void> {
  for (let i = 1; i <= n; i++) await readEvents(await postTurn(id, `${prefix} ${i}`));
}

/** The session id a chat command's answer names ("Session <id> …" from /status). */
function sessionIn(text: string | undefined): string {
  const m = /Session (\S+)/.exec(text ?? "");
  if (!m) throw new Error(`no session in ${JSON.stringify(text)}`);
  return m[1]!;
}

async function tgSay(text: string): Promise<void> {
  await toTelegram(text.startsWith("/") ? tg.command(text.slice(1).split(" ")[0]!, text.split(" ").slice(1).join(" "), TG_USER) : tg.dm(text, TG_USER));
  await settle();
}
const tgLast = () => telegram.texts(TG_USER).at(-1);

describe("instructions", () => {
  it("every request opens with SYSTEM_PROMPT's default, the date and where the agent talks; PATCH adds the session's own, null clears them", async () => {
    const id = await newSession();
    await readEvents(await postTurn(id, "hello"));
    const first = llm.calls.at(-1)!.body.messages[0]!;
    expect(first.role).toBe("system");
    expect(first.content).toContain("You are a helpful AI assistant");
    expect(first.content).toMatch(/Today is \w+day, \d{4}-\d{2}-\d{2} \(UTC\)/);
    expect(first.content).toContain("in the hermes-edge CLI");

    const patched = await json<{ session: { title: string; instructions: string } }>(
      await call(`/v1/sessions/${id}`, { method: "PATCH", json: { title: "french", instructions: "  Answer in French.  " } }),
    );
    expect(patched.session).toMatchObject({ title: "french", instructions: "Answer in French." });
    await readEvents(await postTurn(id, "and now?"));
    expect(llm.calls.at(-1)!.body.messages[0]!.content).toContain("Answer in French.");

    await json(await call(`/v1/sessions/${id}`, { method: "PATCH", json: { instructions: null } }));
    await readEvents(await postTurn(id, "again"));
    expect(llm.calls.at(-1)!.body.messages[0]!.content).not.toContain("Answer in French.");
    // The history is the conversation itself, with no system message stored in it.
    expect(conversation(llm.calls.at(-1)!.body).every((m) => m.role !== "system")).toBe(true);
  });

  it("PATCH refuses what is not a title or instructions, and unknown sessions", async () => {
    const id = await newSession();
    for (const body of [{}, { instructions: 5 }, { title: "" }, { instructions: "x".repeat(20_000) }]) {
      expect((await call(`/v1/sessions/${id}`, { method: "PATCH", json: body })).status).toBe(400);
    }
    expect((await call(`/v1/sessions/${id}`, { method: "PATCH", body: "{not json", headers: { "content-type": "application/json" } })).status).toBe(400);
    expect((await call("/v1/sessions/01NOSUCHSESSION00000000000", { method: "PATCH", json: { title: "x" } })).status).toBe(404);
  });

  it("/instructions on Telegram: shows, sets, clears; the next turn follows them", async () => {
    await tgSay("/instructions");
    expect(tgLast()).toContain("has no instructions of its own");
    await tgSay("/instructions Always answer in haiku.");
    expect(tgLast()).toContain("Saved.");
    await tgSay("/instructions");
    expect(tgLast()).toContain("Always answer in haiku.");
    await tgSay("tell me about the sea");
    expect(llm.calls.at(-1)!.body.messages[0]!.content).toContain("Always answer in haiku.");
    expect(llm.calls.at(-1)!.body.messages[0]!.content).toContain("Telegram");
    await tgSay("/instructions clear");
    expect(tgLast()).toContain("Cleared");
    await tgSay("and the mountains");
    expect(llm.calls.at(-1)!.body.messages[0]!.content).not.toContain("haiku");
  });

  it("/instructions on Discord and Slack", async () => {
    await toDiscord(dc.command("instructions", { text: "Be terse." }, { channelId: "3701" }));
    await settle();
    expect(discord.contents().at(-1)).toContain("Saved.");
    await toDiscord(dc.command("ask", { prompt: "hi" }, { channelId: "3701" }));
    await settle();
    expect(llm.calls.at(-1)!.body.messages[0]!.content).toContain("Be terse.");
    expect(llm.calls.at(-1)!.body.messages[0]!.content).toContain("Discord");

    await toSlack(sl.slash("instructions Use bullet points.", "U1002", "D7001"));
    await settle();
    expect(slack.responses().at(-1)).toContain("Saved.");
    await toSlack(sl.dm("hi there", "U1002", "D7001"));
    await settle();
    expect(llm.calls.at(-1)!.body.messages[0]!.content).toContain("Use bullet points.");
    expect(llm.calls.at(-1)!.body.messages[0]!.content).toContain("Slack");
  });
});

describe("/status and /compact", () => {
  it("on Telegram: the session, its context against the budget and its turns; /compact folds all but the newest turns into the summary the next request carries", async () => {
    await tgSay("/new");
    for (let i = 1; i <= 6; i++) await tgSay(`fact number ${i}`);
    await tgSay("/status");
    const status = tgLast()!;
    const id = sessionIn(status);
    expect(status).toMatch(/model fake-model/);
    expect(status).toMatch(/\d+ of 32000 tokens in context · 6 turns/);
    expect(status).toContain("Idle.");

    await tgSay("/compact");
    expect(tgLast()).toMatch(/^Folded 4 older messages into the session's summary/);
    const summaryRow = await env.DB.prepare("SELECT summary, folded_through FROM summaries WHERE session_id = ?")
      .bind(id)
      .first<{ summary: string; folded_through: number }>();
    expect(summaryRow?.summary).toBeTruthy();

    await tgSay("what were the facts?");
    const sent = llm.calls.at(-1)!.body.messages;
    expect(sent[1]!.content).toContain(SUMMARY_PREFIX.trim());
    // The newest four turns verbatim, then this one; the two oldest are in the summary only.
    const users = sent.filter((m) => m.role === "user").map((m) => m.content);
    expect(users).toEqual(["fact number 3", "fact number 4", "fact number 5", "fact number 6", "what were the facts?"]);
    await tgSay("/status");
    expect(tgLast()).toContain("(older turns summarised)");
    // The full transcript stays stored.
    const all = await json<{ messages: unknown[] }>(await call(`/v1/sessions/${id}/messages`));
    expect(all.messages).toHaveLength(14);
  });

  it("on Discord and Slack, and POST /v1/sessions/:id/compact", async () => {
    await toDiscord(dc.command("status", {}, { channelId: "3702" }));
    await settle();
    expect(discord.contents().at(-1)).toContain("No session here yet");
    await toDiscord(dc.command("ask", { prompt: "one" }, { channelId: "3702" }));
    await settle();
    await toDiscord(dc.command("status", {}, { channelId: "3702" }));
    await settle();
    expect(discord.contents().at(-1)).toMatch(/Session \S+ "one" · model fake-model\n\d+ of 32000 tokens in context · 1 turns/);
    await toDiscord(dc.command("compact", {}, { channelId: "3702" }));
    await settle();
    expect(discord.contents().at(-1)).toContain("Nothing to fold yet");

    await toSlack(sl.dm("first", "U1002", "D7002"));
    await settle();
    await toSlack(sl.slash("status", "U1002", "D7002"));
    await settle();
    expect(slack.responses().at(-1)).toMatch(/Session \S+ "first" · model fake-model/);
    await toSlack(sl.slash("compact", "U1002", "D7002"));
    await settle();
    expect(slack.responses().at(-1)).toContain("Nothing to fold yet");

    const id = await newSession();
    await turns(id, 6);
    expect((await json(await call(`/v1/sessions/${id}/messages`))) as { summary: unknown }).toMatchObject({ summary: null });
    expect(await json(await call(`/v1/sessions/${id}/compact`, { method: "POST" }))).toEqual({ compacted: true, folded_messages: 4 });
    // The transcript says which messages the summary stands for (the console folds them under it).
    const transcript = (await json(await call(`/v1/sessions/${id}/messages`))) as { messages: Array<{ id: number }>; summary: unknown };
    expect(transcript.messages).toHaveLength(12);
    expect(transcript.summary).toEqual({ text: expect.stringContaining("User: message 1"), folded_through: transcript.messages[3]!.id });
    expect(await json(await call(`/v1/sessions/${id}/compact`, { method: "POST" }))).toEqual({ compacted: false, folded_messages: 0 });
    expect((await call("/v1/sessions/01NOSUCHSESSION00000000000/compact", { method: "POST" })).status).toBe(404);
  });
});

describe("a summary that fails to generate", () => {
  it("never fails the turn: the oldest turns are trimmed instead, and the log says so", async () => {
    const id = await newSession();
    await turns(id, 6, "turn");
    const logs: string[] = [];
    // A warning, with the model's error as its own argument (its stack and cause kept).
    const errors: unknown[] = [];
    const spy = vi.spyOn(console, "warn").mockImplementation((...args: unknown[]) => void (logs.push(args.map(String).join(" ")), errors.push(args[1])));
    try {
      llm.then({ kind: "http", status: 400, body: JSON.stringify({ error: { message: "the summariser refuses" } }) });
      expect(await json(await call(`/v1/sessions/${id}/compact`, { method: "POST" }))).toEqual({ compacted: true, folded_messages: 4 });
      // The transcript still says which messages left the model's requests, with no summary for them.
      const transcript = (await json(await call(`/v1/sessions/${id}/messages`))) as { messages: Array<{ id: number }>; summary: unknown };
      expect(transcript.summary).toEqual({ text: null, folded_through: transcript.messages[3]!.id });
    } finally {
      spy.mockRestore();
    }
    expect(logs.some((l) => l.includes("the summary could not be written") && l.includes("trimming the 4 oldest message(s) instead"))).toBe(true);
    const kept = errors.find((e): e is Error => e instanceof Error && e.message.includes("the summariser refuses"));
    expect(kept?.cause).toBeInstanceOf(Error); // not flattened to its message: the provider's error is still behind it
    const events = await readEvents(await postTurn(id, "turn 7"));
    expect(events.at(-1)!.event).toBe("done");
    const sent = conversation(llm.calls.at(-1)!.body);
    expect(sent.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["turn 3", "turn 4", "turn 5", "turn 6", "turn 7"]);
    expect(llm.calls.at(-1)!.body.messages.some((m) => textOf(m.content).startsWith(SUMMARY_PREFIX.trim()))).toBe(false);
  });
});

type UsageRows = { usage: Array<{ key: string; turns: number; input_tokens: number; output_tokens: number }> };

describe("usage", () => {
  it("sums the provider's usage fields per session, per platform user and per day", async () => {
    const id = await newSession();
    let input = 0;
    let output = 0;
    for (let i = 1; i <= 12; i++) {
      llm.then({ kind: "text", chunks: [`answer ${i}`], usage: { prompt_tokens: 100 * i, completion_tokens: 7 * i } });
      input += 100 * i;
      output += 7 * i;
    }
    await turns(id, 12);
    const bySession = await json<UsageRows>(await call("/v1/usage?group=session"));
    expect(bySession.usage.find((u) => u.key === id)).toEqual({ key: id, turns: 12, input_tokens: input, output_tokens: output, title: "message 1" });
    const row = await json<{ session: { input_tokens: number; output_tokens: number } }>(await call(`/v1/sessions/${id}`));
    expect(row.session).toMatchObject({ input_tokens: input, output_tokens: output });
    const listed = await json<{ sessions: Array<{ id: string; input_tokens: number }> }>(await call("/v1/sessions?limit=200"));
    expect(listed.sessions.find((s) => s.id === id)?.input_tokens).toBe(input);

    const today = new Date().toISOString().slice(0, 10);
    const byDay = await json<UsageRows>(await call(`/v1/usage?group=day&since=${today}&until=${today}`));
    expect(byDay.usage).toHaveLength(1);
    expect(byDay.usage[0]!.input_tokens).toBeGreaterThanOrEqual(input);
    expect((await json<UsageRows>(await call("/v1/usage?group=day&since=2999-01-01"))).usage).toEqual([]);

    llm.then({ kind: "text", chunks: ["a reply"], usage: { prompt_tokens: 321, completion_tokens: 12 } });
    await toSlack(sl.dm("count me", "U1002", "D7003"));
    await settle();
    const byUser = await json<UsageRows>(await call("/v1/usage?group=user"));
    expect(byUser.usage.find((u) => u.key === "slack:U1002")?.input_tokens).toBeGreaterThanOrEqual(321);
    expect(byUser.usage.find((u) => u.key === "cli")?.input_tokens).toBeGreaterThanOrEqual(input);

    for (const q of ["group=week", "since=yesterday", "until=2026-13-45x"]) expect((await call(`/v1/usage?${q}`)).status).toBe(400);
    expect((await call("/v1/usage", { token: null })).status).toBe(401);
  });

  it("estimates a turn whose provider reports no usage", async () => {
    const id = await newSession();
    await readEvents(await postTurn(id, "no usage reported for this one"));
    const u = (await json<UsageRows>(await call("/v1/usage?group=session"))).usage.find((r) => r.key === id)!;
    expect(u.turns).toBe(1);
    expect(u.input_tokens).toBeGreaterThan(10);
    expect(u.output_tokens).toBeGreaterThan(0);
  });
});

async function d1Traces(id: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [table, col] of [
    ["sessions", "id"],
    ["messages", "session_id"],
    ["summaries", "session_id"],
    ["usage", "session_id"],
    ["session_routes", "session_id"],
  ] as const) {
    out[table] = (await env.DB.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE ${col} = ?`).bind(id).first<{ n: number }>())!.n;
  }
  return out;
}

describe("delete", () => {
  it("removes every trace: D1 rows, the object's storage, files; the chat bound to it starts fresh", async () => {
    await tgSay("/new");
    for (let i = 1; i <= 6; i++) await tgSay(`secret ${i}`);
    await tgSay("/compact");
    await tgSay("/status");
    const id = sessionIn(tgLast());
    await env.FILES.put(`sessions/${id}/photo.jpg`, "jpeg bytes");
    await env.FILES.put(`sessions/${id}x/other.txt`, "another session's file");
    expect(Object.values(await d1Traces(id)).every((n) => n > 0)).toBe(true);

    expect(await json(await call(`/v1/sessions/${id}`, { method: "DELETE" }))).toEqual({ deleted: true });
    expect(await d1Traces(id)).toEqual({ sessions: 0, messages: 0, summaries: 0, usage: 0, session_routes: 0 });
    expect((await env.FILES.list({ prefix: `sessions/${id}/` })).objects).toEqual([]);
    expect((await env.FILES.list({ prefix: `sessions/${id}x/` })).objects).toHaveLength(1);
    const tables = await runInDurableObject(agent(id), (_i, state) =>
      state.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '_cf_%'").toArray(),
    );
    expect(tables).toEqual([]);
    expect((await call(`/v1/sessions/${id}`)).status).toBe(404);
    expect((await call(`/v1/sessions/${id}/messages`)).status).toBe(404);
    expect((await call(`/v1/sessions/${id}`, { method: "DELETE" })).status).toBe(404);

    // The chat carries on in a new session, with none of the old messages in its requests.
    await tgSay("who am I?");
    expect(conversation(llm.calls.at(-1)!.body).map((m) => m.content)).toEqual(["who am I?"]);
    await tgSay("/status");
    expect(sessionIn(tgLast())).not.toBe(id);
    await env.FILES.delete(`sessions/${id}x/other.txt`);
  });

  it("a session nobody created gets no storage when it is asked about", async () => {
    const id = "01NEVERCREATED000000000000";
    expect((await call(`/v1/sessions/${id}`)).status).toBe(404);
    expect((await call(`/v1/sessions/${id}`, { method: "DELETE" })).status).toBe(404);
    expect((await call(`/v1/sessions/${id}/compact`, { method: "POST" })).status).toBe(404);
    const tables = await runInDurableObject(agent(id), (_i, state) =>
      state.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '_cf_%'").toArray(),
    );
    expect(tables).toEqual([]);
  });
});

describe("export and import", () => {
  it("JSONL export → import → export gives the same bytes, summary and usage included; Markdown reads as a transcript", async () => {
    const id = await newSession("round trip");
    for (let i = 1; i <= 6; i++) llm.then({ kind: "text", chunks: [`reply ${i}`], usage: { prompt_tokens: 50 + i, completion_tokens: 5 } });
    await turns(id, 6, "line");
    await json(await call(`/v1/sessions/${id}/compact`, { method: "POST" }));
    await json(await call(`/v1/sessions/${id}`, { method: "PATCH", json: { instructions: "Keep it short." } }));
    // A file that came with the first message: the export carries its reference.
    await runInDurableObject(agent(id), (_i, state) => {
      const turn = state.storage.sql.exec<{ turn_id: string }>("SELECT turn_id FROM messages ORDER BY id LIMIT 1").one().turn_id;
      state.storage.sql.exec(
        "INSERT INTO attachments (session, turn_id, idx, kind, name, mime, size, seconds, status, key, detail, note, created_at) VALUES (?, ?, 0, 'document', 'notes.txt', 'text/plain', 12, NULL, 'inlined', ?, NULL, '[document notes.txt]', 1)",
        id,
        turn,
        `sessions/${id}/${turn}/0-notes.txt`,
      );
    });
    const first = await call(`/v1/sessions/${id}/export`);
    expect(first.headers.get("content-type")).toContain("application/x-ndjson");
    const a = await bodyText(first);
    const lines = a
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string });
    expect(lines.map((l) => l.type)).toEqual(["session", ...Array(12).fill("message"), "summary", ...Array(6).fill("usage"), "attachment"]);
    expect(lines.at(-1)).toMatchObject({ attachment: { name: "notes.txt", status: "inlined", key: expect.stringMatching(/0-notes\.txt$/) } });

    await json(await call(`/v1/sessions/${id}`, { method: "DELETE" }));
    expect(await json(await call("/v1/sessions/import", { method: "POST", body: a }), 201)).toEqual({ imported: [id], skipped: [] });
    const b = await bodyText(await call(`/v1/sessions/${id}/export`));
    expect(b).toBe(a);
    // D1 has it again (lists, usage), and a second import changes nothing.
    expect((await json<UsageRows>(await call("/v1/usage?group=session"))).usage.find((u) => u.key === id)?.turns).toBe(6);
    expect(await json(await call("/v1/sessions/import", { method: "POST", body: a }))).toEqual({ imported: [], skipped: [id] });
    // It goes on as the same conversation.
    await readEvents(await postTurn(id, "line 7"));
    expect(llm.calls.at(-1)!.body.messages[0]!.content).toContain("Keep it short.");
    expect(llm.calls.at(-1)!.body.messages[1]!.content).toContain(SUMMARY_PREFIX.trim());

    const md = await (await call(`/v1/sessions/${id}/export?format=md`)).text();
    expect(md).toContain("round trip");
    expect(md).toContain("line 1");
    expect(md).toContain("reply 6");
  });

  it("an export's session line is not stale: the title, message count and tokens the API shows (it said null, 0, 0), and the Markdown is headed by the title", async () => {
    const id = await newSession();
    await turns(id, 2, "stale export check");
    const { session } = await json<{ session: { title: string; message_count: number; input_tokens: number; output_tokens: number } }>(
      await call(`/v1/sessions/${id}`),
    );
    expect(session.title).toBeTruthy();
    expect(session.message_count).toBeGreaterThan(0);
    expect(session.input_tokens + session.output_tokens).toBeGreaterThan(0);
    const line = JSON.parse((await bodyText(await call(`/v1/sessions/${id}/export`))).split("\n")[0]!) as {
      session: { title: string; messageCount: number; inputTokens: number; outputTokens: number };
    };
    expect(line.session).toMatchObject({
      title: session.title,
      messageCount: session.message_count,
      inputTokens: session.input_tokens,
      outputTokens: session.output_tokens,
    });
    expect((await (await call(`/v1/sessions/${id}/export?format=md`)).text()).split("\n")[0]).toBe(`# ${session.title}`);
  });

  it("refuses bodies that are not an export, naming the line", async () => {
    const bad = await json<{ error: { message: string } }>(
      await call("/v1/sessions/import", {
        method: "POST",
        body: '{"type":"session","version":1,"session":{"id":"x","source":"cli","startedAt":1,"lastActiveAt":1}}\nnot json\n',
      }),
      400,
    );
    expect(bad.error.message).toMatch(/line 2/);
    expect((await call("/v1/sessions/import", { method: "POST", body: "" })).status).toBe(400);
    expect((await call("/v1/sessions/import", { method: "POST", body: '{"type":"message","session_id":"x","message":{}}\n' })).status).toBe(400);
    expect((await call(`/v1/sessions/${await newSession()}/export?format=pdf`)).status).toBe(400);
  });
});

describe("RETENTION_DAYS", () => {
  it("the cron deletes messages older than the cutoff, here and in D1, after folding them into the summary; newer ones stay", async () => {
    const id = await newSession();
    await turns(id, 6, "old or new");
    const old = Date.now() - 40 * 24 * 60 * 60 * 1000;
    // The first three turns (six messages) are forty days old.
    await runInDurableObject(agent(id), (_i, state) => state.storage.sql.exec("UPDATE messages SET created_at = ? WHERE id <= 6", old));
    await env.DB.prepare("UPDATE messages SET created_at = ? WHERE session_id = ? AND local_id <= 6").bind(old, id).run();
    const turnIds = await runInDurableObject(agent(id), (_i, state) =>
      state.storage.sql.exec<{ id: number; turn_id: string }>("SELECT id, turn_id FROM messages ORDER BY id").toArray(),
    );
    const oldTurn = turnIds.find((m) => m.id === 1)!.turn_id;
    const newTurn = turnIds.find((m) => m.id === 12)!.turn_id;
    await env.FILES.put(`sessions/${id}/${oldTurn}/0-photo.jpg`, "old");
    await env.FILES.put(`sessions/${id}/${newTurn}/0-photo.jpg`, "new");

    const report = await runMaintenance({ ...env, RETENTION_DAYS: "30" }, Date.now());
    expect(report.retained).toBeGreaterThanOrEqual(6);
    const left = await json<{ messages: Array<{ content: string }> }>(await call(`/v1/sessions/${id}/messages`));
    expect(left.messages).toHaveLength(6);
    expect(left.messages[0]!.content).toBe("old or new 4");
    expect((await env.DB.prepare("SELECT COUNT(*) AS n FROM messages WHERE session_id = ?").bind(id).first<{ n: number }>())!.n).toBe(6);
    expect((await env.DB.prepare("SELECT summary FROM summaries WHERE session_id = ?").bind(id).first<{ summary: string }>())?.summary).toBeTruthy();
    expect((await env.FILES.list({ prefix: `sessions/${id}/` })).objects.map((o) => o.key)).toEqual([`sessions/${id}/${newTurn}/0-photo.jpg`]);
    // Unset: nothing goes.
    expect((await runMaintenance(env, Date.now() + 400 * 24 * 60 * 60 * 1000)).retained).toBe(0);
  });
});
