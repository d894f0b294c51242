import type { ChatMessage, RawMessage, Role, ToolCall } from "./types.ts";
import { itemAt } from "./item-at.ts";

const ROLES: ReadonlySet<string> = new Set<Role>(["system", "user", "assistant", "tool"]);

/** Content given to a tool call whose result never arrived (interrupted, crashed, lost). */
export const MISSING_TOOL_RESULT = "[no result: this tool call did not complete]";

/**
 * Repairs a transcript so any provider accepts it (SPEC section 2):
 * - unknown roles are dropped;
 * - a tool result that does not answer a call of the assistant message right before its
 *   block is dropped;
 * - a call with no result gets a stub result, results kept in call order;
 * - consecutive plain-text user messages are merged with a blank line.
 * The input is never mutated, and repairing a repaired transcript changes nothing.
 */
export function repairTranscript(input: readonly RawMessage[]): ChatMessage[] {
  const known = input.filter((m) => ROLES.has(m.role)).map(normalise);
  const paired = pairToolResults(known);
  return mergeUserRuns(paired);
}

function normalise(m: RawMessage): ChatMessage {
  const out: ChatMessage = { role: m.role as Role, content: m.content ?? null };
  if (m.role === "assistant" && m.tool_calls && m.tool_calls.length > 0) out.tool_calls = m.tool_calls.map(copyCall);
  if (m.role === "tool") {
    out.tool_call_id = m.tool_call_id ?? "";
    if (m.name) out.name = m.name;
  }
  if (m.finish_reason) out.finish_reason = m.finish_reason as ChatMessage["finish_reason"];
  if (m.role === "assistant" && m.model) out.model = m.model;
  return out;
}

function copyCall(c: ToolCall): ToolCall {
  return { id: c.id, type: "function", function: { name: c.function.name, arguments: c.function.arguments } };
}

function pairToolResults(msgs: ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  let i = 0;
  while (i < msgs.length) {
    const m = itemAt(msgs, i);
    i++;
    if (m.role === "tool") continue; // orphan: no assistant call block right before it
    out.push(m);
    if (!m.tool_calls) continue;
    const block: ChatMessage[] = [];
    for (let r = msgs[i]; r?.role === "tool"; r = msgs[i]) {
      block.push(r);
      i++;
    }
    const used = new Set<number>();
    for (const call of m.tool_calls) {
      const at = block.findIndex((r, k) => !used.has(k) && r.tool_call_id === call.id);
      const result = block[at];
      if (result !== undefined) {
        used.add(at);
        out.push(result);
      } else {
        out.push({ role: "tool", tool_call_id: call.id, name: call.function.name, content: MISSING_TOOL_RESULT });
      }
    }
  }
  return out;
}

function isPlainUser(m: ChatMessage | undefined): m is ChatMessage & { content: string } {
  return m !== undefined && m.role === "user" && typeof m.content === "string";
}

function mergeUserRuns(msgs: ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const m of msgs) {
    const last = out[out.length - 1];
    if (isPlainUser(m) && isPlainUser(last)) {
      out[out.length - 1] = { ...last, content: `${last.content}\n\n${m.content}` };
    } else {
      out.push(m);
    }
  }
  return out;
}

/**
 * Checks the invariants the repair guarantees; returns the first problem or null.
 * Used by tests and as a guard before a model call.
 */
export function transcriptProblem(msgs: readonly ChatMessage[]): string | null {
  for (let i = 0; i < msgs.length; i++) {
    const m = itemAt(msgs, i);
    if (!ROLES.has(m.role)) return `message ${i}: unknown role ${m.role}`;
    if (isPlainUser(m) && isPlainUser(msgs[i - 1])) return `message ${i}: two user messages in a row`;
    if (m.role === "assistant" && m.tool_calls) {
      const ids = m.tool_calls.map((c) => c.id);
      for (let k = 0; k < ids.length; k++) {
        const r = msgs[i + 1 + k];
        if (!r || r.role !== "tool" || r.tool_call_id !== ids[k]) return `message ${i}: call ${ids[k]} has no result after it`;
      }
      const after = msgs[i + 1 + ids.length];
      if (after?.role === "tool") return `message ${i + 1 + ids.length}: extra tool result`;
      i += ids.length;
    } else if (m.role === "tool") {
      return `message ${i}: tool result without a call`;
    }
  }
  return null;
}
