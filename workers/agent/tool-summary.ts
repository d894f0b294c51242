import { itemAt } from "./item-at.ts";

/** Longest summary of one tool call shown in progress events. */
export const SUMMARY_MAX_CHARS = 80;

const MASK = "***";
const SECRET_WORDS = new Set([
  "token",
  "key",
  "apikey",
  "password",
  "passwd",
  "pwd",
  "passphrase",
  "secret",
  "authorization",
  "auth",
  "cookie",
  "credential",
  "credentials",
  "bearer",
]);

/**
 * True for argument names that look like they hold a secret: any word of the name (split
 * at `_`, `-`, `.`, spaces and camelCase) is token, key, password, secret, authorization
 * or the like. `api_key`, `accessToken` and `X-Api-Key` match; `keyword` does not.
 */
export function isSecretKey(name: string): boolean {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  return words.some((w) => SECRET_WORDS.has(w)) || SECRET_WORDS.has(words.join(""));
}

/** A URL with its password and secret-looking query values masked; other text unchanged. */
function maskUrl(text: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return text;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return text;
  }
  if (url.password) url.password = MASK;
  if (url.username && !url.password) url.username = MASK;
  for (const name of [...url.searchParams.keys()]) {
    if (isSecretKey(name)) url.searchParams.set(name, MASK);
  }
  // URLSearchParams re-encodes the mask; show it plainly.
  return url.toString().replaceAll(encodeURIComponent(MASK), MASK);
}

/** A copy of a JSON value with the values of secret-looking keys masked, at any depth. */
export function maskSecrets(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return maskUrl(value);
  if (value === null || typeof value !== "object") return value;
  if (depth > 8) return "…";
  if (Array.isArray(value)) return value.map((v) => maskSecrets(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = isSecretKey(k) && v !== null && v !== "" ? MASK : maskSecrets(v, depth + 1);
  return out;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function show(value: unknown): string {
  return typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
}

/**
 * A short, single-line description of a tool call for progress events, at most
 * {@link SUMMARY_MAX_CHARS} characters: the tool name, then its only argument's value
 * (`fetch_url https://example.com/a`) or `key=value` pairs. Values of secret-looking keys
 * and secret URL parts are masked. Arguments that are not a JSON object show the name only.
 */
export function summarizeCall(name: string, rawArguments: string): string {
  let args: unknown;
  try {
    args = JSON.parse(rawArguments || "{}");
  } catch {
    args = null;
  }
  let text = name;
  if (args !== null && typeof args === "object" && !Array.isArray(args)) {
    const entries = Object.entries(maskSecrets(args) as Record<string, unknown>);
    const only = entries.length === 1 ? itemAt(entries, 0) : null;
    const rest =
      only && !isSecretKey(only[0]) && (only[1] === null || typeof only[1] !== "object")
        ? show(only[1])
        : entries.map(([k, v]) => `${k}=${typeof v === "string" && v !== MASK ? JSON.stringify(v) : show(v)}`).join(" ");
    if (rest) text = `${name} ${oneLine(rest)}`;
  }
  return text.length <= SUMMARY_MAX_CHARS ? text : `${text.slice(0, SUMMARY_MAX_CHARS - 1)}…`;
}
