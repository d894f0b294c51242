/** What a secret is replaced with in a log line. */
export const REDACTED = "[redacted]";

/** Field names whose values are secrets, whatever they hold. */
const SECRET_KEY = /token|secret|passw(or)?d|authorization|cookie|api[-_]?key|signature|credential/i;

/**
 * Secret-shaped text: replaced wherever it appears. Each keeps the words around the secret
 * (`/bot`, `Bearer `, `token=`) so the line still says what was there.
 */
const SHAPES: ReadonlyArray<readonly [RegExp, string | ((...m: string[]) => string)]> = [
  [/\/bot\d+:[\w-]+/g, `/bot${REDACTED}`], // Telegram's Bot API URLs: /bot<token>/method
  [/(?<!\d)\d{6,}:[\w-]{30,}/g, REDACTED], // a Telegram bot token on its own
  // An Authorization header, in a header dump or JSON; its scheme (Bearer, Bot, Basic) is kept.
  [/\b(authorization["']?\s*[:=]\s*["']?)(?:(bearer|bot|basic)\s+)?[^\s"',;}]+/gi, (_, pre, scheme) => `${pre}${scheme ? `${scheme} ` : ""}${REDACTED}`],
  [/\b(Bearer|Bot|Basic)\s+[\w.~+/=-]{8,}/g, `$1 ${REDACTED}`],
  [/\bxox[abposr]-[\w-]+|\bxapp-[\w-]+/g, REDACTED], // Slack tokens
  [/\bsk-[\w-]{16,}/g, REDACTED], // OpenAI-style API keys
  [/\b[\w-]{24,}\.[\w-]{6}\.[\w-]{27,}/g, REDACTED], // Discord bot tokens
  [/(\/(?:webhooks|interactions)\/\d+\/)[\w.-]{20,}/g, `$1${REDACTED}`], // Discord interaction tokens in paths
  [/([?&][\w-]*(?:token|key|secret|sig|signature|password|auth)[\w-]*=)[^&#\s"']+/gi, `$1${REDACTED}`], // URL query secrets
  [/(\/\/)[^/\s:@]+:[^/\s@]+@/g, `$1${REDACTED}@`], // user:password@ in URLs
];

/** A field that holds a secret by its name (`token`, `authorization`, …); numbers and flags (`input_tokens: 12`) are not secrets. */
const secretField = (key: string, value: unknown) =>
  SECRET_KEY.test(key) && (typeof value === "string" ? value !== "" : typeof value === "object" && value !== null);

/** `text` with every secret-shaped part replaced by `[redacted]`. */
export function redactText(text: string): string {
  return SHAPES.reduce((t, [shape, by]) => (typeof by === "string" ? t.replace(shape, by) : t.replace(shape, by)), text);
}

/**
 * A value with secrets taken out: strings by shape, object fields by name (`token`,
 * `authorization`, …), errors copied when they change.
 */
export function redactValue(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return redactText(value);
  if (value instanceof Error) return redactError(value, depth);
  if (value === null || typeof value !== "object" || depth > 4) return value;
  if (Array.isArray(value)) return value.map((v) => redactValue(v, depth + 1));
  if (value instanceof Headers) return redactValue(Object.fromEntries(value), depth);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = secretField(k, v) ? REDACTED : redactValue(v, depth + 1);
  return out;
}

/**
 * The error itself when nothing in it (message, stack, cause, own fields) is secret-shaped;
 * otherwise a copy of the same class with the secrets taken out, its stack and cause kept.
 */
export function redactError(err: Error, depth = 0): Error {
  const message = redactText(err.message);
  const stack = err.stack === undefined ? undefined : redactText(err.stack);
  const cause = depth < 4 && err.cause !== undefined ? redactValue(err.cause, depth + 1) : err.cause;
  const own = Object.entries(err).filter(([k]) => k !== "cause");
  const fields = own.map(([k, v]) => [k, secretField(k, v) ? REDACTED : redactValue(v, depth + 1)] as const);
  if (message === err.message && stack === err.stack && cause === err.cause && fields.every(([, v], i) => v === own[i]?.[1])) return err;
  const copy = Object.create(Object.getPrototypeOf(err) as object) as Error;
  for (const [k, v] of fields) Object.defineProperty(copy, k, { value: v, enumerable: true, writable: true, configurable: true });
  Object.defineProperty(copy, "message", { value: message, writable: true, configurable: true });
  if (stack !== undefined) Object.defineProperty(copy, "stack", { value: stack, writable: true, configurable: true });
  if (err.cause !== undefined) Object.defineProperty(copy, "cause", { value: cause, writable: true, configurable: true });
  if (Object.hasOwn(err, "name")) Object.defineProperty(copy, "name", { value: err.name, writable: true, configurable: true });
  return copy;
}
