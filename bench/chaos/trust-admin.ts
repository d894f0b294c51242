/**
 * Scenarios (h) and (i) of issue 20.
 * (h) An allowed but non-admin Telegram user sends /sethome in their own DM, then the
 *     operator hands a CLI session (holding a secret) off with a plain request. The refusal
 *     must name TELEGRAM_ADMIN_USERS, the home must stay the admin's, the handoff must land
 *     in the admin's chat, and neither the secret nor the session may reach that DM. The
 *     admin's own /sethome and the handoff completing are positive controls.
 * (i) Hostile imports: a session reusing a victim's turn ids (its usage must not change),
 *     one with a pending handoff into a chat (never carried out), and bodies that must be
 *     refused with 400 (over PATCH's limits, `tool_calls: [null, 42]`, deep nesting, a
 *     nested column). An accepted hostile body or a touched victim is a breach; a 5xx is
 *     counted by the client.
 */
import { exportBody, exportMessageLine, exportSessionLine } from "../../test/support/export-lines.ts";
import { tg } from "../../test/support/fixtures.ts";
import { telegramHeaders } from "../../test/support/signing.ts";
import { transcript, until, type Tally, type WorkerClient } from "./harness.ts";
import type { Stack } from "./stack.ts";
import { quiet } from "./telegram-dm.ts";

const ADMIN = 1003;
const NON_ADMIN = 1002;

async function command(s: Stack, name: string, userId: number, chatId: number): Promise<string> {
  const u = chatId === userId ? tg.command(name, "", userId) : tg.group(`/${name}`, { userId, chatId });
  (u.message as Record<string, unknown>).entities = [{ type: "bot_command", offset: 0, length: name.length + 1 }];
  const before = s.telegram.messages(chatId).length;
  await s.api.webhook("telegram", JSON.stringify(u), telegramHeaders());
  await until(30_000, `an answer to /${name} in ${chatId}`, () => (s.telegram.messages(chatId).length > before ? true : undefined), 50);
  return s.telegram
    .messages(chatId)
    .slice(before)
    .map((m) => m.plain)
    .join("\n");
}

interface Home {
  chat_id: string;
  set_by: string | null;
}

async function telegramHome(api: WorkerClient): Promise<Home | null> {
  const { platforms } = await api.json<{ platforms: Array<{ name: string; home_channel: Home | null }> }>("/v1/platforms");
  return platforms.find((p) => p.name === "telegram")?.home_channel ?? null;
}

let round = 0;

/** (h) one round: the non-admin's /sethome, then the operator's plain handoff. */
async function sethomeRound(s: Stack, tally: Tally): Promise<void> {
  const group = -100950 - ++round;
  const secret = `cli-secret-${round}-${Date.now() % 100000}`;
  tally.cases++;
  const ok = await command(s, "sethome", ADMIN, group);
  if (!ok.includes("home channel")) tally.add("lost", `the admin's /sethome answered ${JSON.stringify(ok.slice(0, 120))}`);
  tally.cases++;
  const refused = await command(s, "sethome", NON_ADMIN, NON_ADMIN);
  if (!refused.includes("TELEGRAM_ADMIN_USERS")) tally.add("breached", `a non-admin's /sethome answered ${JSON.stringify(refused.slice(0, 120))}`);
  const home = await telegramHome(s.api);
  if (home?.chat_id === String(NON_ADMIN)) tally.add("breached", `the non-admin's DM became the home channel`);

  const cli = (await s.api.json<{ session: { id: string } }>("/v1/sessions", { method: "POST", body: JSON.stringify({ title: "operator notes" }) })).session.id;
  await s.api.json(`/v1/sessions/${cli}/turns`, { method: "POST", body: JSON.stringify({ content: `remember ${secret}` }) }).catch(() => undefined);
  tally.cases++;
  const queued = await s.api.json<{ handoff: { to?: string } }>(`/v1/sessions/${cli}/handoff`, {
    method: "POST",
    body: JSON.stringify({ platform: "telegram", thread: false }),
  });
  if (!queued.handoff.to?.includes(`chat ${group}`)) tally.add("breached", `the handoff was queued to ${JSON.stringify(queued.handoff.to)}`);
  let h = { state: "pending" } as { state: string; destination?: { chat_id: string } | null; error?: string | null };
  for (const from of ["pending", "running"]) {
    if (h.state === from) h = (await s.api.json<{ handoff: typeof h }>(`/v1/sessions/${cli}/handoff?wait=30&state=${from}`)).handoff;
  }
  if (h.state !== "completed") tally.add("lost", `the operator's handoff ended ${h.state}: ${h.error ?? ""}`);
  if (h.destination?.chat_id === String(NON_ADMIN)) tally.add("breached", "the handoff completed into the non-admin's DM");
  await quiet(s.telegram, 800);
  if (s.telegram.messages(NON_ADMIN).some((m) => m.plain.includes(secret))) tally.add("breached", "the CLI session's secret reached the non-admin's DM");
  // The non-admin's next message must not run inside the CLI session.
  const probe = `non-admin probe ${round}`;
  await s.api.webhook("telegram", JSON.stringify(tg.dm(probe, NON_ADMIN)), telegramHeaders());
  await until(30_000, "an answer to the non-admin's probe", () => (s.telegram.messages(NON_ADMIN).some((m) => m.plain.includes(probe)) ? true : undefined), 50);
  if ((await transcript(s.api, cli)).some((m) => m.content?.includes(probe))) tally.add("breached", "the non-admin's message ran inside the CLI session");
}

/** (h) non-admin /sethome, then a handoff: `rounds` times. */
export async function nonAdminSethome(s: Stack, o: { rounds: number }, tally: Tally): Promise<void> {
  for (let r = 0; r < o.rounds; r++) {
    s.reset();
    await sethomeRound(s, tally);
  }
}

const jsonl = exportBody;
const sessionLine = exportSessionLine;
const messageLine = (id: string, turnId: string, extra: Record<string, unknown> = {}) => exportMessageLine(id, 1, turnId, extra);

async function importBody(api: WorkerClient, body: string): Promise<number> {
  const res = await api.fetch("/v1/sessions/import", {
    method: "POST",
    headers: { authorization: `Bearer ${api.token}`, "content-type": "application/x-ndjson" },
    body,
  });
  await res.arrayBuffer();
  return res.status;
}

interface UsageRow {
  key: string;
  turns: number;
  input_tokens: number;
  output_tokens: number;
}

async function usageOf(api: WorkerClient, id: string): Promise<UsageRow | undefined> {
  return (await api.json<{ usage: UsageRow[] }>("/v1/usage?group=session")).usage.find((u) => u.key === id);
}

/** (i) one round of hostile imports against a victim session. */
async function importRound(s: Stack, tally: Tally): Promise<void> {
  const tag = `${++round}${Date.now().toString(36)}`;
  const victim = (await s.api.json<{ session: { id: string } }>("/v1/sessions", { method: "POST", body: JSON.stringify({ title: "victim" }) })).session.id;
  const turn = await s.api.fetch(`/v1/sessions/${victim}/turns`, {
    method: "POST",
    headers: { authorization: `Bearer ${s.api.token}`, "content-type": "application/json" },
    body: JSON.stringify({ content: "spend some tokens" }),
  });
  await turn.text();
  const before = await until(30_000, "the victim's usage in D1", async () => usageOf(s.api, victim), 250);
  const exported = await (await s.api.fetch(`/v1/sessions/${victim}/export`, { headers: { authorization: `Bearer ${s.api.token}` } })).text();
  const turnIds = exported
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { type: string; usage?: { turnId: string } })
    .flatMap((l) => (l.type === "usage" && l.usage ? [l.usage.turnId] : []));

  const reuse = `20261201_000000_reuse${tag}`;
  const zeroed = turnIds.map((turnId) => ({
    type: "usage",
    session_id: reuse,
    usage: { turnId, session: victim, userKey: "cli", day: "2026-12-01", input: 0, output: 0, createdAt: 1 },
  }));
  tally.cases++;
  await importBody(s.api, jsonl(sessionLine(reuse), ...turnIds.map((t) => messageLine(reuse, t)), ...zeroed));
  const after = await usageOf(s.api, victim);
  if (!after || after.input_tokens !== before.input_tokens || after.output_tokens !== before.output_tokens || after.turns !== before.turns) {
    tally.add("breached", `an import reusing the victim's turn ids changed its usage from ${JSON.stringify(before)} to ${JSON.stringify(after)}`);
  }

  const chat = -100960 - round;
  const inFlight = `20261201_000000_flight${tag}`;
  tally.cases++;
  await importBody(
    s.api,
    jsonl(
      sessionLine(inFlight, {
        handoffState: "pending",
        handoffPlatform: "telegram",
        handoffChatId: String(chat),
        handoffRequestedAt: 1,
        activeTurnId: "stuck",
        turnStartedAt: 1,
      }),
    ),
  );
  const h = (await s.api.json<{ handoff: { state: string } | null }>(`/v1/sessions/${inFlight}/handoff`)).handoff;
  if (h?.state === "pending" || h?.state === "running") tally.add("breached", `an imported handoff is ${h.state}`);
  await quiet(s.telegram, 2500);
  if (s.telegram.calls.some((c) => String(c.body.chat_id) === String(chat))) tally.add("breached", `an imported handoff posted in chat ${chat}`);
  const { session } = await s.api.json<{ session: { running: boolean } }>(`/v1/sessions/${inFlight}`);
  if (session.running) tally.add("breached", "an imported session came in with a running turn");

  const refused: Array<[string, string]> = [
    ["instructions of 910,000 characters", jsonl(sessionLine(`20261201_000000_long${tag}`, { instructions: "x".repeat(910_000) }))],
    ["a title over 200 characters", jsonl(sessionLine(`20261201_000000_title${tag}`, { title: "t".repeat(201) }))],
    [
      "tool_calls: [null, 42]",
      jsonl(
        sessionLine(`20261201_000000_tools${tag}`),
        messageLine(`20261201_000000_tools${tag}`, "t1", { role: "assistant", content: null, tool_calls: [null, 42] }),
      ),
    ],
    [
      "deep nesting",
      `{"type":"session","version":1,"session":{"id":"20261201_000000_deep${tag}","source":"cli","startedAt":1,"lastActiveAt":1,"x":${"[".repeat(50_000)}${"]".repeat(50_000)}}}\n`,
    ],
    ["a nested column", jsonl(sessionLine(`20261201_000000_nested${tag}`, { title: { toString: "x" } }))],
  ];
  for (const [what, body] of refused) {
    tally.cases++;
    const status = await importBody(s.api, body);
    if (status < 500 && status !== 400) tally.add("breached", `an import with ${what} answered ${status}`);
  }
}

/** (i) hostile imports: `rounds` times. */
export async function hostileImports(s: Stack, o: { rounds: number }, tally: Tally): Promise<void> {
  for (let r = 0; r < o.rounds; r++) {
    s.reset();
    await importRound(s, tally);
  }
}
