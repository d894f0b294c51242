import { errorChain } from "./error.ts";
import { redactText, redactValue } from "./redact.ts";

/** How much a line matters; a logger drops lines below its level. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** Structured facts about a line. `err` is the thrown value: it is kept whole (stack, cause), never flattened to its message. */
export type LogFields = { err?: unknown } & Record<string, unknown>;

/** One line as a sink receives it: secrets already taken out. */
export interface LogRecord {
  level: LogLevel;
  /** The component path, `inbox:tg:1`, or "" for the root logger. */
  prefix: string;
  message: string;
  /** The fields other than `err`. */
  fields: Record<string, unknown>;
  /** The error, absent when the line has none. */
  err?: unknown;
}

/** Where lines go: the console in the Worker, a list in tests. */
export type LogSink = (record: LogRecord) => void;

/** A logger for one component; `child` adds a part to the prefix. */
export interface Logger {
  child(prefix: string): Logger;
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

/** `key=value` pairs, a value quoted when it holds spaces, quotes or is not a string. */
function logfmt(fields: Record<string, unknown>): string {
  return Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${typeof v === "string" && /^[^\s"=]+$/.test(v) ? v : typeof v === "number" || typeof v === "boolean" ? v : JSON.stringify(v)}`)
    .join(" ");
}

/** The text of a record: `[prefix] message key=value …` (the error is not in it). */
export function formatLine(r: LogRecord): string {
  const facts = logfmt(r.fields);
  return `${r.prefix ? `[${r.prefix}] ` : ""}${r.message}${facts ? ` ${facts}` : ""}`;
}

/**
 * The Worker's sink: `console.error`/`warn`/`log`/`debug` (info goes to `console.log`, as the
 * lines it replaces did), with the error as its own argument so the runtime prints its stack
 * and cause. `console` is read at each call, so a test's `vi.spyOn(console, …)` sees the lines.
 */
export const consoleSink: LogSink = (r) => {
  const write = r.level === "error" ? console.error : r.level === "warn" ? console.warn : r.level === "info" ? console.log : console.debug;
  if (r.err === undefined) write(formatLine(r));
  else write(formatLine(r), r.err);
};

/** A sink for plain text (the gateway's stderr): the error's message and its causes' at the end of the line, no stack. */
export function textSink(write: (line: string) => void): LogSink {
  return (r) => write(r.err === undefined ? formatLine(r) : `${formatLine(r)} (${redactText(errorChain(r.err))})`);
}

/** A logger writing to `sink` (the console by default) the lines at `level` and above. Secrets never reach the sink. */
export function createLogger(opts: { sink?: LogSink; level?: LogLevel; prefix?: string } = {}): Logger {
  const sink = opts.sink ?? consoleSink;
  const min = RANK[opts.level ?? "debug"];
  const make = (prefix: string): Logger => {
    const emit = (level: LogLevel, message: string, fields?: LogFields) => {
      if (RANK[level] < min) return;
      const { err, ...rest } = fields ?? {};
      const record: LogRecord = { level, prefix: redactText(prefix), message: redactText(message), fields: redactValue(rest) as Record<string, unknown> };
      if (err !== undefined) record.err = redactValue(err);
      sink(record);
    };
    return {
      child: (part) => make(prefix ? `${prefix}:${part}` : part),
      debug: (m, f) => emit("debug", m, f),
      info: (m, f) => emit("info", m, f),
      warn: (m, f) => emit("warn", m, f),
      error: (m, f) => emit("error", m, f),
    };
  };
  return make(opts.prefix ?? "");
}

/**
 * A `log(line, err?)` callback for the hosts that take one (the turn runtime, the context
 * keeper, the handoff runner): info, or a warning carrying the error when there is one.
 */
export function logLines(logger: Logger): (line: string, err?: unknown) => void {
  return (line, err) => (err === undefined ? logger.info(line) : logger.warn(line, { err }));
}
