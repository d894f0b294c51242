import type { Message, Session } from "./api-types.ts";
import { ApiRefusal, CliError, type ApiClient } from "./client.ts";
import { displayWidth } from "../workers/format/index.ts";
import type { Style } from "./io.ts";
import { itemAt } from "../workers/agent/item-at.ts";

/** "3m ago", "2d ago". */
export function ago(then: number, now: number): string {
  const s = Math.max(0, Math.round((now - then) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86400)}d ago`;
}

export async function listSessions(client: ApiClient, limit = 50): Promise<Session[]> {
  return (await client.json<{ sessions: Session[] }>("GET", `/v1/sessions?limit=${limit}`)).sessions;
}

export async function getSession(client: ApiClient, id: string): Promise<Session | null> {
  try {
    return (await client.json<{ session: Session }>("GET", `/v1/sessions/${encodeURIComponent(id)}`)).session;
  } catch (err) {
    if (err instanceof ApiRefusal && err.status === 404) return null;
    throw err;
  }
}

/** A parked session is offered by `hermes-edge chat` for this long after `/handoff cli`. */
export const PARKED_OFFER_MS = 24 * 60 * 60_000;

/**
 * The newest session a chat parked for the CLI (`/handoff cli`) and nobody continued since
 * (no message after it was parked), within {@link PARKED_OFFER_MS}; null when none.
 */
export function parkedSession(sessions: readonly Session[], now: number): Session | null {
  const parked = sessions.filter((s) => {
    const h = s.handoff;
    return (
      h?.platform === "cli" && h.state === "completed" && h.finished_at !== null && s.last_active_at <= h.finished_at && now - h.finished_at < PARKED_OFFER_MS
    );
  });
  return parked.sort((a, b) => (b.handoff?.finished_at ?? 0) - (a.handoff?.finished_at ?? 0))[0] ?? null;
}

/** "2 min ago", "3 h ago": how long since a session was parked, for the offer. */
export function minutesAgo(then: number, now: number): string {
  const min = Math.max(0, Math.floor((now - then) / 60_000));
  if (min < 1) return "just now";
  if (min < 120) return `${min} min ago`;
  return `${Math.floor(min / 60)} h ago`;
}

/**
 * Finds a session from what a user typed: `latest` (a session parked for the CLI first,
 * else the most recently active), an id, a title, or a unique prefix of
 * either. `recent` is the numbered list shown last, for `/resume 2`.
 */
export async function resolveSession(client: ApiClient, ref: string, recent: readonly Session[] = []): Promise<Session> {
  const r = ref.trim();
  if (/^\d{1,3}$/.test(r) && recent.length > 0) {
    const s = recent[Number(r) - 1];
    if (!s) throw new CliError(`no session number ${r} in the last list (1-${recent.length})`);
    return s;
  }
  if (r !== "latest") {
    const direct = await getSession(client, r);
    if (direct) return direct;
  }
  const all = await listSessions(client, 200);
  if (r === "latest") {
    const first = parkedSession(all, Date.now()) ?? all[0];
    if (!first) throw new CliError("there are no sessions yet");
    return first;
  }
  const exactTitle = all.find((s) => s.title === r);
  if (exactTitle) return exactTitle;
  const lower = r.toLowerCase();
  const prefixed = all.filter((s) => s.id.startsWith(r) || (s.title ?? "").toLowerCase().startsWith(lower));
  const [only] = prefixed;
  if (prefixed.length === 1 && only) return only;
  if (prefixed.length > 1) {
    throw new CliError(
      `'${r}' matches ${prefixed.length} sessions: ${prefixed
        .slice(0, 5)
        .map((s) => s.id)
        .join(", ")}; be more specific`,
    );
  }
  throw new CliError(`no session matches '${r}' (try \`hermes-edge sessions list\`)`);
}

/** 950 → "950", 12_345 → "12.3k", 4_200_000 → "4.2M". */
export function tokens(n: number): string {
  if (!Number.isFinite(n) || n < 1000) return String(Math.max(0, Math.round(n || 0)));
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** One line per session, numbered, for humans; `current` (the chat's session) is marked `*` and "(current)". */
export function formatSessionList(sessions: readonly Session[], now: number, style: Style, current?: string): string[] {
  if (sessions.length === 0) return [style.dim("no sessions yet")];
  return sessions.map((s, i) => {
    const here = s.id === current;
    const flags = [here ? style.green("(current)") : "", s.running ? style.yellow("running") : "", s.handoff ? `handoff:${s.handoff.state}` : ""]
      .filter(Boolean)
      .join(" ");
    const title = s.title ? s.title : style.dim("(untitled)");
    return `${here ? "*" : " "}${String(i + 1).padStart(2)}. ${style.cyan(s.id)}  ${title}  ${style.dim(`${s.source} · ${s.message_count} msgs · ${tokens(s.input_tokens + s.output_tokens)} tokens · ${ago(s.last_active_at, now)}`)}${flags ? `  ${flags}` : ""}`;
  });
}

function oneLine(text: string | null, max: number): string {
  const t = (text ?? "").replace(/\s+/g, " ").trim();
  return t.length <= max ? t : `${t.slice(0, max - 1)}…`;
}

/**
 * Words of `text` in lines of at most `width` columns (a word longer than that is cut), the
 * first after `first`, the rest after `rest` (both counted): a terminal never breaks a word.
 */
export function wrapWords(text: string, width: number, first: string, rest: string): string[] {
  const full = Math.max(1, width - displayWidth(rest));
  const lines: string[] = [];
  let line = first;
  let empty = true;
  for (let word of text.split(" ").filter(Boolean)) {
    // A word no line can hold is cut into pieces that fit one.
    const pieces: string[] = [];
    for (; word.length > full; word = word.slice(full)) pieces.push(word.slice(0, full));
    pieces.push(word);
    for (const piece of pieces) {
      if (!empty && displayWidth(line) + 1 + displayWidth(piece) > width) {
        lines.push(line);
        line = rest;
        empty = true;
      }
      line += (empty ? "" : " ") + piece;
      empty = false;
    }
  }
  lines.push(line);
  return lines;
}

/**
 * The last few user/assistant exchanges, shown when a session is resumed: each message cut
 * to `max` characters, and wrapped at word boundaries to `columns` (a terminal's width) with
 * the text indented under itself; no `columns` (a pipe), one line each.
 */
export function recap(messages: readonly Message[], style: Style, opts: { columns?: number | undefined; exchanges?: number; max?: number } = {}): string[] {
  const { exchanges = 3, max = 160, columns } = opts;
  const visible = messages.filter((m) => (m.role === "user" || m.role === "assistant") && (m.content ?? "").trim() !== "");
  const starts = visible.map((m, i) => (m.role === "user" ? i : -1)).filter((i) => i >= 0);
  const from = starts.length > exchanges ? itemAt(starts, starts.length - exchanges) : 0;
  return visible.slice(from).flatMap((m) => {
    const who = m.role === "user" ? "you" : "agent";
    const cut = m.finish_reason === "interrupted" ? " [interrupted]" : "";
    const text = `${oneLine(m.content, max)}${cut}`;
    const lines = columns ? wrapWords(text, columns, `  ${who}: `, " ".repeat(who.length + 4)) : [`  ${who}: ${text}`];
    const head = `  ${who}: `;
    lines[0] = `  ${m.role === "user" ? style.bold(who) : style.cyan(who)}: ${(lines[0] ?? head).slice(head.length)}`;
    return cut && style.enabled ? lines.map((l) => l.replace(cut.trim(), style.dim(cut.trim()))) : lines;
  });
}

/** A transcript, for `sessions show`. */
export function formatTranscript(messages: readonly Message[], style: Style): string[] {
  const out: string[] = [];
  for (const m of messages) {
    if (m.role === "tool") {
      out.push(style.dim(`  [tool ${m.tool_name ?? "?"}] ${oneLine(m.content, 120)}`));
      continue;
    }
    const calls = m.tool_calls?.map((c) => c.function.name).join(", ");
    const head = m.role === "user" ? style.bold("you") : m.role === "assistant" ? style.cyan("agent") : style.dim(m.role);
    const tail = m.finish_reason && m.finish_reason !== "stop" && m.finish_reason !== "tool_calls" ? style.dim(` [${m.finish_reason}]`) : "";
    if (m.content) out.push(`${head}: ${m.content}${tail}`);
    if (calls) out.push(style.dim(`  (calls ${calls})`));
  }
  return out;
}
