/** Lines of a session export (JSONL, as `sessions export` writes them), for import tests and benchmarks. */

export function exportSessionLine(id: string, extra: Record<string, unknown> = {}) {
  return { type: "session", version: 1, session: { id, source: "cli", startedAt: 1, lastActiveAt: 1, title: "imported", ...extra } };
}

/** One stored message of session `id` (a user "hi" unless `extra` says otherwise). */
export function exportMessageLine(id: string, localId: number, turnId: string, extra: Record<string, unknown> = {}) {
  const message = {
    id: localId,
    role: "user",
    content: "hi",
    tool_calls: null,
    tool_call_id: null,
    name: null,
    finish_reason: null,
    turn_id: turnId,
    input_tokens: null,
    output_tokens: null,
    model: null,
    user_key: "cli",
    created_at: 1,
    active: true,
    ...extra,
  };
  return { type: "message", session_id: id, message };
}

/** Lines as one JSONL body (strings as they are: a hostile line stays hostile). */
export const exportBody = (...lines: unknown[]) => `${lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n")}\n`;
