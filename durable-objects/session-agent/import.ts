import { asc, eq } from "drizzle-orm";
import type { Db } from "../../workers/db/client.ts";
import { messages, sessions } from "../../workers/db/schema.ts";
import { rowMessage, SqlTranscript, type Sql } from "../../workers/runtime/index.ts";
import type { RecordStore, SessionRecord } from "./record.ts";

/**
 * A session created before its object kept its own storage lives only in D1: its row and
 * transcript are copied in once (under their D1 ids, as already synced), after which the
 * object serves it from its own storage. Null when D1 has no such session either.
 */
export async function importFromD1(d: Db, sql: Sql, records: RecordStore, sessionId: string): Promise<SessionRecord | null> {
  const [found, rows] = await d.batch([
    d.select().from(sessions).where(eq(sessions.id, sessionId)).limit(1),
    d.select().from(messages).where(eq(messages.sessionId, sessionId)).orderBy(asc(messages.id)),
  ]);
  const row = found[0];
  if (!row) return null;
  // Another call may have imported it while this one waited on D1.
  const already = records.get();
  if (already) return already.id === sessionId ? already : null;
  records.ensure();
  const transcript = new SqlTranscript(sql, sessionId);
  sql.transaction(() => {
    transcript.importRows(
      rows.map((m) => ({
        id: m.localId ?? m.id,
        message: rowMessage({
          role: m.role,
          content: m.content,
          tool_calls: m.toolCalls,
          tool_call_id: m.toolCallId,
          name: m.toolName,
          finish_reason: m.finishReason,
        }),
        turnId: m.turnId,
        usage: m.inputTokens !== null || m.outputTokens !== null ? { input: m.inputTokens ?? 0, output: m.outputTokens ?? m.tokenCount ?? 0 } : undefined,
        model: m.model,
        at: m.createdAt,
        active: m.active === 1,
      })),
    );
    records.put(row);
    records.markClean(records.version);
  });
  return records.get();
}
