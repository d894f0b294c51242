import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { createHash } from "node:crypto";
import path from "node:path";
import type { Session } from "./api-types.ts";
import { CliError, type ApiClient } from "./client.ts";
import { askLine, println, type CliIo, type Style } from "./io.ts";
import { resolveSession } from "./sessions.ts";
import { itemAt } from "../workers/agent/item-at.ts";

/**
 * The session data commands: `sessions set`, `delete`, `export`, `import`, and `usage`.
 * Each prints for people by default and the API's own answer with `--json`.
 */
export interface DataContext {
  api: ApiClient;
  io: CliIo;
  style: Style;
  json: boolean;
}

const out = (ctx: DataContext, s = "") => println(ctx.io.stdout, s);
const note = (ctx: DataContext, s: string) => println(ctx.io.stderr, s);
const sessionPath = (id: string) => `/v1/sessions/${encodeURIComponent(id)}`;

/** `sessions set <ref> --title … --instructions … | --clear-instructions`. */
export async function setSession(ctx: DataContext, ref: string, opts: { title?: string; instructions?: string; clearInstructions: boolean }): Promise<number> {
  if (opts.instructions !== undefined && opts.clearInstructions) throw new CliError("give --instructions or --clear-instructions, not both", 2);
  const patch: { title?: string; instructions?: string | null } = {};
  if (opts.title !== undefined) patch.title = opts.title;
  if (opts.instructions !== undefined) patch.instructions = opts.instructions === "-" ? await readStdin(ctx.io) : opts.instructions;
  if (opts.clearInstructions) patch.instructions = null;
  if (Object.keys(patch).length === 0) throw new CliError("nothing to set: give --title, --instructions (- reads them from stdin) or --clear-instructions", 2);
  const s = await resolveSession(ctx.api, ref);
  const body = await ctx.api.json<{ session: Session }>("PATCH", sessionPath(s.id), patch);
  if (ctx.json) return (out(ctx, JSON.stringify(body)), 0);
  const after = body.session;
  out(ctx, `${ctx.style.green("✓")} ${after.title ?? "(untitled)"}  ${ctx.style.cyan(after.id)}`);
  out(ctx, after.instructions ? `instructions: ${after.instructions}` : ctx.style.dim("no instructions of its own"));
  return 0;
}

/** `sessions delete <ref>`: asks first on a terminal; elsewhere it needs --yes. */
export async function deleteSession(ctx: DataContext, ref: string, yes: boolean): Promise<number> {
  const s = await resolveSession(ctx.api, ref);
  const what = `${s.title ? `"${s.title}" ` : ""}${s.id} (${s.message_count} messages, ${s.source})`;
  if (!yes) {
    if (!ctx.io.stdin.isTTY) throw new CliError(`not deleting ${what} without --yes (stdin is not a terminal to ask on)`, 2);
    const answer = await askLine(ctx.io, `Delete ${what} everywhere: transcript, summary, usage, files? This cannot be undone. [y/N] `);
    if (!/^y(es)?$/i.test(answer ?? "")) return (note(ctx, "not deleted"), 1);
  }
  const body = await ctx.api.json<{ deleted: boolean }>("DELETE", sessionPath(s.id));
  if (ctx.json) return (out(ctx, JSON.stringify({ ...body, id: s.id })), 0);
  out(ctx, `${ctx.style.green("✓")} deleted ${what}`);
  return 0;
}

/** A day (YYYY-MM-DD) or a moment (ISO 8601) as epoch ms, for --since. */
export function parseSince(raw: string): number {
  const t = /^\d{4}-\d{2}-\d{2}$/.test(raw) ? Date.parse(`${raw}T00:00:00Z`) : /^\d{4}-\d{2}-\d{2}T/.test(raw) ? Date.parse(raw) : Number.NaN;
  if (!Number.isFinite(t)) throw new CliError(`--since takes a day (2026-11-30) or a time (2026-11-30T12:00:00Z), not '${raw}'`, 2);
  return t;
}

/** Every session active since `since`, newest first, a page at a time. */
export async function allSessions(api: ApiClient, since: number | null): Promise<Session[]> {
  const found: Session[] = [];
  for (let before: string | null = null; ; ) {
    const q: string = `/v1/sessions?limit=200${before ? `&before=${encodeURIComponent(before)}` : ""}`;
    const page: { sessions: Session[]; next?: string | null } = await api.json("GET", q);
    for (const s of page.sessions) {
      if (since !== null && s.last_active_at < since) return found;
      found.push(s);
    }
    if (!page.next) return found;
    before = page.next;
  }
}

/**
 * `sessions export [<ref>] [--format jsonl|md] [--out DIR] [--since …]`: one session, or
 * every one (active since --since). To stdout, or one file per session in DIR, written
 * whole (a temporary name, then renamed) so an interrupted export leaves no half file.
 */
export async function exportSessions(ctx: DataContext, ref: string | undefined, opts: { format: string; out?: string; since?: string }): Promise<number> {
  if (opts.format !== "jsonl" && opts.format !== "md") throw new CliError(`--format is jsonl or md, not '${opts.format}'`, 2);
  if (ref && opts.since) throw new CliError("--since selects among all sessions; with a session given, leave it out", 2);
  const since = opts.since ? parseSince(opts.since) : null;
  const chosen = ref ? [await resolveSession(ctx.api, ref)] : await allSessions(ctx.api, since);
  if (chosen.length === 0) return (note(ctx, "no sessions to export"), 0);
  if (opts.out) await mkdir(opts.out, { recursive: true });
  const files: string[] = [];
  const used = new Set<string>();
  for (const [i, s] of chosen.entries()) {
    const text = await ctx.api.text(`${sessionPath(s.id)}/export?format=${opts.format}`, opts.out ? "file" : opts.format === "md" ? "text" : "jsonl");
    if (!opts.out) {
      ctx.io.stdout.write(opts.format === "md" && i > 0 ? `\n---\n\n${text}` : text);
      continue;
    }
    const file = path.join(opts.out, exportFileName(s.id, opts.format, used));
    await writeFile(`${file}.partial`, text, { mode: 0o600 });
    await rename(`${file}.partial`, file);
    files.push(file);
    if (!ctx.json && chosen.length > 1) note(ctx, `exported ${i + 1}/${chosen.length}  ${s.id}`);
  }
  if (!opts.out) return 0;
  if (ctx.json) return (out(ctx, JSON.stringify({ exported: chosen.map((s) => s.id), files })), 0);
  out(ctx, `${ctx.style.green("✓")} exported ${chosen.length} session${chosen.length === 1 ? "" : "s"} to ${opts.out}`);
  return 0;
}

/**
 * The file a session is exported to: its id where that is a plain file name, else the id
 * made safe plus a hash of the exact id ("a/b" and "a_b" both made a_b.jsonl, and the
 * second export overwrote the first). Names are compared ignoring case (macOS, Windows).
 */
export function exportFileName(id: string, format: string, used: Set<string>): string {
  const safe = id.replace(/[^\w.-]+/g, "_").replace(/^\.+/, "_");
  let name = `${safe}.${format}`;
  if (safe !== id || used.has(name.toLowerCase())) name = `${safe}-${createHash("sha256").update(id).digest("hex").slice(0, 12)}.${format}`;
  used.add(name.toLowerCase());
  return name;
}

async function readStdin(io: CliIo): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString("utf8");
}

/** `sessions import <file.jsonl|->`: sessions exported before come back as they were. */
export async function importSessions(ctx: DataContext, source: string): Promise<number> {
  let text: string;
  try {
    text = source === "-" ? await readStdin(ctx.io) : await readFile(path.resolve(ctx.io.cwd, source), "utf8");
  } catch (err) {
    throw new CliError(`cannot read ${source}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  const body = await ctx.api.sendText<{ imported: string[]; skipped: string[] }>("POST", "/v1/sessions/import", text, "application/x-ndjson");
  if (ctx.json) return (out(ctx, JSON.stringify(body)), 0);
  out(
    ctx,
    `${ctx.style.green("✓")} imported ${body.imported.length} session${body.imported.length === 1 ? "" : "s"}${body.imported.length > 0 ? `: ${body.imported.join(", ")}` : ""}`,
  );
  if (body.skipped.length > 0) out(ctx, ctx.style.dim(`skipped ${body.skipped.length} already there: ${body.skipped.join(", ")}`));
  return 0;
}

type UsageRow = { key: string; turns: number; input_tokens: number; output_tokens: number };

/** 12345 → "12,345". */
const n = (v: number) => v.toLocaleString("en-US");

/** `usage [--group session|user|day] [--since DAY] [--until DAY]`: a table, totals last. */
export async function showUsage(ctx: DataContext, opts: { group: string; since?: string; until?: string }): Promise<number> {
  if (!["session", "user", "day"].includes(opts.group)) throw new CliError(`--group is session, user or day, not '${opts.group}'`, 2);
  for (const [flag, v] of [
    ["since", opts.since],
    ["until", opts.until],
  ] as const) {
    if (v !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(v)) throw new CliError(`--${flag} takes a UTC day, YYYY-MM-DD (not '${v}')`, 2);
  }
  const q = new URLSearchParams({ group: opts.group, ...(opts.since ? { since: opts.since } : {}), ...(opts.until ? { until: opts.until } : {}) });
  const body = await ctx.api.json<{ usage: UsageRow[] }>("GET", `/v1/usage?${q}`);
  if (ctx.json) return (out(ctx, JSON.stringify(body)), 0);
  if (body.usage.length === 0) return (out(ctx, ctx.style.dim("no usage recorded yet")), 0);
  const total = body.usage.reduce(
    (t, r) => ({ key: "total", turns: t.turns + r.turns, input_tokens: t.input_tokens + r.input_tokens, output_tokens: t.output_tokens + r.output_tokens }),
    { key: "total", turns: 0, input_tokens: 0, output_tokens: 0 },
  );
  const cells = (r: UsageRow) => [r.key, n(r.turns), n(r.input_tokens), n(r.output_tokens), n(r.input_tokens + r.output_tokens)];
  const header = [opts.group, "turns", "input", "output", "total"];
  const rows = body.usage.map(cells);
  const footer = cells(total);
  const all = [header, ...rows, footer];
  const widths = header.map((_, c) => Math.max(...all.map((r) => itemAt(r, c).length)));
  const line = (r: string[]) => r.map((cell, c) => (c === 0 ? cell.padEnd(itemAt(widths, c)) : cell.padStart(itemAt(widths, c)))).join("  ");
  out(ctx, ctx.style.bold(line(header)));
  for (const r of rows) out(ctx, line(r));
  out(ctx, ctx.style.dim(line(footer)));
  return 0;
}
