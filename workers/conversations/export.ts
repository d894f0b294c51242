import * as z from "zod";
import { SESSION_INSTRUCTIONS_MAX_CHARS } from "../agent/index.ts";
import { parseJson } from "../json.ts";

/**
 * The export format of sessions (`hermes-edge sessions export`, `GET …/export`): JSONL, one
 * session after another, each opened by its `session` line; `import` takes the same lines
 * back, so export → import → export gives the same bytes. Markdown is for reading only.
 */
export const EXPORT_VERSION = 1;

/** Deeper JSON than any export has (a session line nests 2 levels, a message with tool calls 4). */
export const IMPORT_MAX_DEPTH = 16;

/** A tool call exactly as the agent stores it (`tool_calls: [null, 42]` made every later turn fail). */
const ToolCall = z.lazy(() =>
  z
    .object({
      id: z.string().min(1).max(200),
      type: z.literal("function"),
      function: z.object({ name: z.string().min(1).max(200), arguments: z.string() }).strict(),
    })
    .strict(),
);

const ExportedMessage = z.lazy(() =>
  z.object({
    id: z.number().int().positive(),
    role: z.enum(["system", "user", "assistant", "tool"]),
    content: z.string().nullable(),
    tool_calls: z.array(ToolCall).max(128).nullable(),
    tool_call_id: z.string().nullable(),
    name: z.string().nullable(),
    finish_reason: z.string().nullable(),
    turn_id: z.string().nullable(),
    input_tokens: z.number().int().nullable(),
    output_tokens: z.number().int().nullable(),
    model: z.string().nullable(),
    user_key: z.string().nullable(),
    created_at: z.number().int(),
    active: z.boolean(),
  }),
);

/** What came with a turn's user message, and where its bytes were kept (a reference: the bytes are not exported). */
const ExportedAttachment = z.lazy(() =>
  z.object({
    turnId: z.string(),
    index: z.number().int().nonnegative(),
    kind: z.string(),
    name: z.string().nullable(),
    mime: z.string().nullable(),
    size: z.number().nullable(),
    seconds: z.number().nullable(),
    status: z.string(),
    key: z.string().nullable(),
    detail: z.string().nullable(),
    note: z.string(),
    createdAt: z.number().int(),
  }),
);

const ExportedUsage = z.lazy(() =>
  z.object({
    turnId: z.string(),
    session: z.string(),
    userKey: z.string(),
    day: z.string(),
    input: z.number().int(),
    output: z.number().int(),
    createdAt: z.number().int(),
  }),
);

/**
 * The session row as exported (every column of `sessions`): ids and times must be right,
 * title and instructions take PATCH's limits, and every other column is a plain value.
 */
const ExportedSession = z.lazy(() =>
  z
    .object({
      id: z.string().min(1).max(200),
      source: z.string().min(1).max(40),
      startedAt: z.number().int(),
      lastActiveAt: z.number().int(),
      title: z.string().max(200).nullable().optional(),
      instructions: z.string().max(SESSION_INSTRUCTIONS_MAX_CHARS).nullable().optional(),
    })
    .catchall(z.union([z.string().max(10_000), z.number(), z.boolean(), z.null()])),
);

const Line = z.lazy(() =>
  z.discriminatedUnion("type", [
    z.object({ type: z.literal("session"), version: z.literal(EXPORT_VERSION), session: ExportedSession }),
    z.object({ type: z.literal("message"), session_id: z.string(), message: ExportedMessage }),
    z.object({ type: z.literal("summary"), session_id: z.string(), summary: z.string(), folded_through: z.number().int() }),
    z.object({ type: z.literal("usage"), session_id: z.string(), usage: ExportedUsage }),
    z.object({ type: z.literal("attachment"), session_id: z.string(), attachment: ExportedAttachment }),
  ]),
);

export type ExportedMessage = z.infer<typeof ExportedMessage>;

/** One session as exported: everything needed to bring it back exactly. */
export interface SessionExport {
  session: { id: string; source: string; startedAt: number; lastActiveAt: number } & Record<string, string | number | boolean | null>;
  messages: ExportedMessage[];
  summary: { summary: string; folded_through: number } | null;
  usage: Array<z.infer<typeof ExportedUsage>>;
  attachments: Array<z.infer<typeof ExportedAttachment>>;
}

/** JSONL lines of one session. */
export function toJsonl(e: SessionExport): string {
  const id = e.session.id;
  const lines: unknown[] = [{ type: "session", version: EXPORT_VERSION, session: e.session }];
  for (const m of e.messages) lines.push({ type: "message", session_id: id, message: m });
  if (e.summary) lines.push({ type: "summary", session_id: id, ...e.summary });
  for (const u of e.usage) lines.push({ type: "usage", session_id: id, usage: u });
  for (const a of e.attachments) lines.push({ type: "attachment", session_id: id, attachment: a });
  return lines.map((l) => `${JSON.stringify(l)}\n`).join("");
}

/** Sessions from JSONL (several may follow each other), or the first problem, with its line number. */
export function fromJsonl(text: string): { ok: true; sessions: SessionExport[] } | { ok: false; error: string } {
  const out: SessionExport[] = [];
  const lines = text.split("\n");
  for (const [i, raw] of lines.entries()) {
    if (raw.trim() === "") continue;
    if (nestingOf(raw) > IMPORT_MAX_DEPTH) return { ok: false, error: `line ${i + 1}: nested deeper than ${IMPORT_MAX_DEPTH} levels (not an export)` };
    const parsed = parseJson(raw, Line);
    if (!parsed.ok) return { ok: false, error: `line ${i + 1}: ${parsed.notJson ? "not JSON" : `${parsed.issue.path || "line"}: ${parsed.issue.message}`}` };
    const line = parsed.value;
    if (line.type === "session") {
      out.push({ session: line.session, messages: [], summary: null, usage: [], attachments: [] });
      continue;
    }
    const current = out.at(-1);
    if (!current || current.session.id !== line.session_id)
      return { ok: false, error: `line ${i + 1}: belongs to session ${line.session_id}, which has no session line before it` };
    if (line.type === "message") current.messages.push(line.message);
    else if (line.type === "summary") current.summary = { summary: line.summary, folded_through: line.folded_through };
    else if (line.type === "usage") current.usage.push(line.usage);
    else current.attachments.push(line.attachment);
  }
  return { ok: true, sessions: out };
}

/** How deeply a line's JSON nests (brackets outside strings), read without parsing it. */
export function nestingOf(line: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (inString) {
      if (ch === "\\") i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === "[" || ch === "{") max = Math.max(max, ++depth);
    else if (ch === "]" || ch === "}") depth--;
  }
  return max;
}

/** A readable transcript. */
export function toMarkdown(e: SessionExport): string {
  const s = e.session;
  const when = (t: number) => new Date(t).toISOString().replace("T", " ").slice(0, 16);
  const parts = [
    `# ${typeof s.title === "string" && s.title ? s.title : s.id}`,
    "",
    `Session \`${s.id}\` · ${s.source} · started ${when(s.startedAt)} UTC`,
    "",
  ];
  if (e.summary) parts.push("> **Summary of the earlier conversation:** " + e.summary.summary.replace(/\n/g, "\n> "), "");
  for (const m of e.messages) {
    if (!m.active) continue;
    if (m.role === "tool") parts.push(`<details><summary>tool result (${m.name ?? "tool"})</summary>\n\n\`\`\`\n${m.content ?? ""}\n\`\`\`\n</details>`, "");
    else if (m.role === "assistant" && m.tool_calls?.length)
      parts.push(`**assistant** called ${m.tool_calls.length} tool(s)${m.content ? `: ${m.content}` : ""}`, "");
    else parts.push(`**${m.role}** (${when(m.created_at)}):`, "", m.content ?? "", "");
  }
  return parts.join("\n");
}
