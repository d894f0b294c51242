import { and, eq, inArray, lt, ne } from "drizzle-orm";
import type { Db } from "../../workers/db/client.ts";
import { withAttachmentsJson, type MessageJson } from "../../workers/db/json.ts";
import { messages, sessionRoutes, sessions, summaries, usage } from "../../workers/db/schema.ts";
import type { AttachmentRecord } from "../../workers/attachments/index.ts";
import type { ContextKeeper, SessionRuntime } from "../../workers/runtime/index.ts";
import { inbox } from "../../workers/conversations/stubs.ts";
import { sessionFilesPrefix } from "../../workers/conversations/files.ts";
import type { SessionExport } from "../../workers/conversations/export.ts";
import { formatToolList, listTools, type ToolRegistry } from "../../workers/agent/index.ts";
import { webUrl } from "./handoff-state.ts";
import { newRecord, type SessionRecord } from "./record.ts";

export type { SessionExport } from "../../workers/conversations/export.ts";

/** The transcript as `GET …/messages` shows it. */
export interface TranscriptView {
  /** `undelivered`: why the platform did not deliver this reply (on a turn's last assistant message). */
  messages: Array<MessageJson & { undelivered?: string }>;
  summary: { text: string | null; folded_through: number } | null;
}

/**
 * The stored transcript, and `summary` once older messages were folded out of the model's
 * requests: the messages through `folded_through` are covered by `text` (null when the
 * summary could not be written and they were trimmed instead).
 */
export function transcriptView(rec: SessionRecord, rt: SessionRuntime): TranscriptView {
  const folded = rec.foldedThrough ?? 0;
  const rows = rt.transcript.rows();
  const failures = rt.sent.failures();
  const lastOfTurn = new Map(rows.flatMap((r, i) => (r.message.role === "assistant" && r.turnId ? [[r.turnId, i] as const] : [])));
  return {
    messages: rows.map((r, i) => {
      const why = r.turnId !== null && lastOfTurn.get(r.turnId) === i ? failures.get(r.turnId) : undefined;
      const json = withAttachmentsJson(r, rt.attachments);
      return why === undefined ? json : { ...json, undelivered: why };
    }),
    summary: folded > 0 || rec.summary ? { text: rec.summary ?? null, folded_through: folded } : null,
  };
}

/** The session's own storage as an export. */
export function exportSession(rec: SessionRecord, rt: SessionRuntime): SessionExport {
  // Where a chat's handoff came from (a reply target: a Discord interaction token, say) stays in the object.
  const { summary, foldedThrough, handoffDestKey: _k, handoffTurnId: _t, handoffOrigin: _o, handoffReleased: _r, handoffDmUser: _d, ...row } = rec;
  return {
    session: row as SessionExport["session"],
    messages: rt.transcript.rows({ includeInactive: true }).map((m) => ({
      id: m.id,
      role: m.message.role,
      content: m.message.content,
      tool_calls: m.message.tool_calls ?? null,
      tool_call_id: m.message.tool_call_id ?? null,
      name: m.message.name ?? null,
      finish_reason: m.message.finish_reason ?? null,
      turn_id: m.turnId,
      input_tokens: m.usage ? m.usage.input : null,
      output_tokens: m.usage ? m.usage.output : null,
      model: m.model,
      user_key: m.userKey,
      created_at: m.createdAt,
      active: m.active,
    })),
    summary: summary ? { summary, folded_through: foldedThrough ?? 0 } : null,
    usage: rt.usage.all(),
    attachments: rt.attachments.all(),
  };
}

/** Why an imported handoff that was in flight is not carried out. */
export const IMPORTED_IN_FLIGHT_ERROR = "was pending or running when exported; not carried out after import (request the handoff again)";

/**
 * The session row of an export. Columns an older export lacks take their defaults; the
 * running flag never comes along, nor a handoff in flight (the next alarm or cron would
 * carry it out into the chat the file names): pending or running becomes failed. Keys and
 * turns only a live handoff owns are dropped; a destination link is kept only if http(s).
 */
export function recordFromExport(data: SessionExport, now = Date.now()): SessionRecord {
  const s = data.session;
  const base = newRecord({ source: s.source, model: typeof s.model === "string" ? s.model : "offline" }, s.startedAt, s.id);
  const summary = data.summary ? { summary: data.summary.summary, foldedThrough: data.summary.folded_through } : {};
  const rec: SessionRecord = {
    ...base,
    ...(s as Partial<SessionRecord>),
    activeTurnId: null,
    turnStartedAt: null,
    handoffDestKey: null,
    handoffTurnId: null,
    handoffOrigin: null,
    handoffReleased: null,
    handoffDmUser: null,
    ...summary,
  };
  rec.handoffDestUrl = webUrl(rec.handoffDestUrl);
  if (rec.handoffState === "pending" || rec.handoffState === "running")
    Object.assign(rec, { handoffState: "failed", handoffError: IMPORTED_IN_FLIGHT_ERROR, handoffFinishedAt: now });
  return rec;
}

/**
 * The export with every turn id another session already has in D1's usage replaced by a
 * fresh one (in its messages, usage and attachments alike): an imported session reusing
 * another's turn ids rewrote that session's usage (and reset its user's daily budget).
 */
export async function rekeyTakenTurns(d: Db, data: SessionExport): Promise<SessionExport> {
  const ids = [
    ...new Set(
      [...data.messages.map((m) => m.turn_id), ...data.usage.map((u) => u.turnId), ...data.attachments.map((a) => a.turnId)].filter(
        (t): t is string => t !== null,
      ),
    ),
  ];
  const taken = new Set<string>();
  for (let i = 0; i < ids.length; i += 90) {
    const rows = await d
      .select({ turnId: usage.turnId })
      .from(usage)
      .where(and(inArray(usage.turnId, ids.slice(i, i + 90)), ne(usage.sessionId, data.session.id)));
    for (const r of rows) taken.add(r.turnId);
  }
  if (taken.size === 0) return data;
  const fresh = new Map([...taken].map((t) => [t, crypto.randomUUID()]));
  const to = (t: string) => fresh.get(t) ?? t;
  return {
    ...data,
    messages: data.messages.map((m) => ({ ...m, turn_id: m.turn_id === null ? null : to(m.turn_id) })),
    usage: data.usage.map((u) => ({ ...u, turnId: to(u.turnId) })),
    attachments: data.attachments.map((a) => ({ ...a, turnId: to(a.turnId) })),
  };
}

/** The `/tools` answer for a session's tools (undefined: the model takes no tools). */
export async function describeTools(tools: ToolRegistry | undefined): Promise<string> {
  if (!tools) return "The offline model uses no tools; configure a real model (LLM_BASE_URL) to give the agent tools.";
  return formatToolList(await listTools(tools, AbortSignal.timeout(15_000)));
}

/** Loads an export into this (empty) object's storage, as unsynced so the mirror copies it to D1. */
export function importSession(data: SessionExport, rt: SessionRuntime): void {
  rt.transcript.importRows(
    data.messages.map((m) => ({
      id: m.id,
      message: {
        role: m.role as "user",
        content: m.content,
        ...(m.tool_calls ? { tool_calls: m.tool_calls as never } : {}),
        ...(m.tool_call_id ? { tool_call_id: m.tool_call_id } : {}),
        ...(m.name ? { name: m.name } : {}),
        ...(m.finish_reason ? { finish_reason: m.finish_reason as never } : {}),
      },
      turnId: m.turn_id,
      usage: m.input_tokens !== null || m.output_tokens !== null ? { input: m.input_tokens ?? 0, output: m.output_tokens ?? 0 } : undefined,
      model: m.model,
      userKey: m.user_key,
      at: m.created_at,
      active: m.active,
    })),
    { synced: false },
  );
  for (const u of data.usage) rt.usage.record(u.turnId, u.userKey, { input: u.input, output: u.output }, u.createdAt);
  // A stored file is this session's only: a key under another session's files is dropped (the reference stays).
  const own = sessionFilesPrefix(data.session.id);
  for (const a of data.attachments) {
    const { turnId, createdAt, ...record } = a;
    rt.attachments.put(
      turnId,
      [{ ...record, key: record.key?.startsWith(own) && !record.key.includes("..") ? record.key : null } as AttachmentRecord],
      createdAt,
    );
  }
}

/**
 * `RETENTION_DAYS` for one session: its messages older than `cutoff` are folded into the
 * summary if they were not already, then deleted in its storage and in D1 (files too).
 * Returns how many went.
 */
export async function retain(env: Env, d: Db, rec: SessionRecord, rt: SessionRuntime, context: ContextKeeper, cutoff: number): Promise<number> {
  const last = rt.transcript.lastIdBefore(cutoff);
  if (last > 0) await context.foldThrough(last);
  const gone = rt.transcript.deleteBefore(cutoff);
  rt.forgetHistory();
  await retainElsewhere(env, d, rec.id, cutoff, gone.turnIds);
  return gone.deleted;
}

/** Deletes a session's messages (in D1) created before `cutoff`, and the files of `turnIds` (the turns whose messages went). */
async function retainElsewhere(env: Env, d: Db, sessionId: string, cutoff: number, turnIds: readonly string[]): Promise<void> {
  await d.delete(messages).where(and(eq(messages.sessionId, sessionId), lt(messages.createdAt, cutoff)));
  for (const turnId of turnIds) await deletePrefix(env.FILES, `${sessionFilesPrefix(sessionId)}${turnId}/`);
}

/** Deletes every object under `prefix`, a page at a time. */
async function deletePrefix(files: R2Bucket, prefix: string): Promise<void> {
  for (let cursor: string | undefined; ; ) {
    const page = await files.list({ prefix, ...(cursor ? { cursor } : {}) });
    if (page.objects.length > 0) await files.delete(page.objects.map((o) => o.key));
    if (!page.truncated) return;
    cursor = page.cursor;
  }
}

/**
 * Removes every trace of a session outside its object: D1 rows (the session, its messages,
 * summary, usage and routes), the bindings of the keys that pointed at it (their Inboxes),
 * and its stored files. The object then deletes its own storage.
 */
export async function deleteEverywhere(env: Env, d: Db, rec: SessionRecord): Promise<void> {
  const routes = await d.select({ key: sessionRoutes.sessionKey }).from(sessionRoutes).where(eq(sessionRoutes.sessionId, rec.id));
  const keys = new Set(routes.map((r) => r.key));
  if (rec.sessionKey) keys.add(rec.sessionKey);
  if (rec.handoffDestKey) keys.add(rec.handoffDestKey);
  await Promise.all([...keys].map((key) => inbox(env, key).unbind(rec.id)));
  await d.batch([
    d.delete(messages).where(eq(messages.sessionId, rec.id)),
    d.delete(summaries).where(eq(summaries.sessionId, rec.id)),
    d.delete(usage).where(eq(usage.sessionId, rec.id)),
    d.delete(sessionRoutes).where(eq(sessionRoutes.sessionId, rec.id)),
    d.delete(sessions).where(eq(sessions.id, rec.id)),
  ]);
  await deletePrefix(env.FILES, sessionFilesPrefix(rec.id));
}
