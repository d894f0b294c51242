import { DEFAULT_DOH_URL, parseContextTokens, type ModelConfig } from "./agent/index.ts";
import { attachmentSettings, type AttachmentSettings } from "./attachments/index.ts";
import { PLATFORMS, isPlatformName, type PlatformName } from "./platforms/names.ts";
import { parseRelaySecrets } from "./relay/token.ts";
import type { BusyPolicy } from "./runtime/index.ts";

/** A trimmed setting; empty or missing means unset. */
export function setting(v: string | undefined | null): string | undefined {
  const t = v?.trim();
  return t ? t : undefined;
}

/** A comma list; empty entries dropped. */
export function list(v: string | undefined | null): string[] {
  return (v ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Who may do something: nobody (unset), everyone (`*`), or listed ids. */
export type AllowList = { kind: "none" } | { kind: "all" } | { kind: "some"; ids: ReadonlySet<string> };

export function allowList(v: string | undefined): AllowList {
  const ids = list(v);
  if (ids.length === 0) return { kind: "none" };
  if (ids.includes("*")) return { kind: "all" };
  return { kind: "some", ids: new Set(ids) };
}

export function isAllowed(allowed: AllowList, userId: string): boolean {
  return allowed.kind === "all" || (allowed.kind === "some" && allowed.ids.has(userId));
}

/** One platform's settings, whether or not it is enabled. */
export interface PlatformSettings {
  name: PlatformName;
  /** Its token/secret pair is set. */
  enabled: boolean;
  /** Which names are missing, for error messages. */
  missing: string[];
  allowed: AllowList;
  /** Who may also `/resume` CLI sessions (`*_ADMIN_USERS`; unset: nobody). */
  admins: AllowList;
  /** The home channel from env (a /sethome in D1 overrides it). */
  envHome: { chatId: string; threadId: string | null } | null;
  /** The gateway whose turns serve this platform (`RELAY_PLATFORMS`), or null: the edge does. */
  gateway: string | null;
}

/** Every setting the Worker runs on, parsed once per isolate from `env`. */
export interface Settings {
  apiToken: string | undefined;
  model: ModelConfig;
  /** `SYSTEM_PROMPT` (unset: the built-in instructions). */
  systemPrompt: string | undefined;
  /** `LLM_CONTEXT_TOKENS`: the token budget of one model request. */
  contextTokens: number;
  /** `FETCH_URL_DOH_URL`: the DNS-over-HTTPS (JSON) endpoint fetch_url resolves names with. */
  fetchUrlDohUrl: string;
  /** `DAILY_TOKEN_BUDGET`: tokens per platform user per UTC day (null: unlimited). */
  dailyTokenBudget: number | null;
  /** `RETENTION_DAYS`: messages older than this are deleted by the cron (null: kept). */
  retentionDays: number | null;
  busyPolicy: BusyPolicy;
  platforms: Record<PlatformName, PlatformSettings>;
  relaySecrets: Map<string, string[]>;
  relayBufferLimit: number;
  /** Attachments: the largest fetched (`ATTACHMENT_MAX_BYTES`) and speech-to-text (`LLM_TRANSCRIBE_MODEL`). */
  attachments: AttachmentSettings;
}

/** Frames kept for a gateway that is away (default); past this the oldest are dropped. */
export const RELAY_BUFFER_LIMIT = 10_000;

const NAMES: Record<PlatformName, { required: Array<keyof Env>; allowed: keyof Env; admins: keyof Env; home: keyof Env; homeThread?: keyof Env }> = {
  telegram: { required: ["TELEGRAM_BOT_TOKEN", "TELEGRAM_WEBHOOK_SECRET"], allowed: "TELEGRAM_ALLOWED_USERS", admins: "TELEGRAM_ADMIN_USERS", home: "TELEGRAM_HOME_CHANNEL", homeThread: "TELEGRAM_HOME_CHANNEL_THREAD_ID" },
  discord: { required: ["DISCORD_BOT_TOKEN", "DISCORD_PUBLIC_KEY"], allowed: "DISCORD_ALLOWED_USERS", admins: "DISCORD_ADMIN_USERS", home: "DISCORD_HOME_CHANNEL" },
  slack: { required: ["SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET"], allowed: "SLACK_ALLOWED_USERS", admins: "SLACK_ADMIN_USERS", home: "SLACK_HOME_CHANNEL" },
};

const read = (env: Env, name: keyof Env) => setting(env[name] as string | undefined);

/**
 * Which gateway serves each relayed platform, from config only (never from a frame):
 * `RELAY_PLATFORMS` entries are `platform` (served by the first gateway id in
 * RELAY_SECRETS) or `platform:gatewayId`. Entries naming an unknown gateway are ignored.
 */
function relayAssignments(env: Env, secrets: Map<string, string[]>): Map<PlatformName, string> {
  const ids = [...secrets.keys()];
  const out = new Map<PlatformName, string>();
  if (ids.length === 0) return out;
  for (const entry of list(env.RELAY_PLATFORMS)) {
    const at = entry.indexOf(":");
    const platform = (at < 0 ? entry : entry.slice(0, at)).trim().toLowerCase();
    const gateway = at < 0 ? ids[0]! : entry.slice(at + 1).trim();
    if (isPlatformName(platform) && ids.includes(gateway)) out.set(platform, gateway);
  }
  return out;
}

function parse(env: Env): Settings {
  const delay = setting(env.OFFLINE_STREAM_DELAY_MS);
  const relaySecrets = parseRelaySecrets(setting(env.RELAY_SECRETS));
  const relayed = relayAssignments(env, relaySecrets);
  const limit = Number(setting(env.RELAY_BUFFER_LIMIT));
  const platforms = Object.fromEntries(
    PLATFORMS.map((name) => {
      const n = NAMES[name];
      const missing = n.required.filter((k) => !read(env, k)) as string[];
      const home = read(env, n.home);
      const settings: PlatformSettings = {
        name,
        enabled: missing.length === 0,
        missing,
        allowed: allowList(read(env, n.allowed)),
        admins: allowList(read(env, n.admins)),
        envHome: home ? { chatId: home, threadId: (n.homeThread && read(env, n.homeThread)) || null } : null,
        gateway: relayed.get(name) ?? null,
      };
      return [name, settings];
    }),
  ) as Record<PlatformName, PlatformSettings>;
  const model: ModelConfig = {
    provider: setting(env.LLM_PROVIDER),
    ai: env.AI,
    baseUrl: setting(env.LLM_BASE_URL),
    apiKey: setting(env.LLM_API_KEY),
    model: setting(env.LLM_MODEL),
    offlineDelayMs: delay !== undefined && Number.isFinite(Number(delay)) ? Math.max(0, Number(delay)) : undefined,
  };
  return {
    apiToken: setting(env.API_TOKEN),
    model,
    systemPrompt: setting(env.SYSTEM_PROMPT),
    contextTokens: parseContextTokens(setting(env.LLM_CONTEXT_TOKENS)),
    dailyTokenBudget: positiveInt(setting(env.DAILY_TOKEN_BUDGET)),
    fetchUrlDohUrl: setting(env.FETCH_URL_DOH_URL) ?? DEFAULT_DOH_URL,
    retentionDays: positiveInt(setting(env.RETENTION_DAYS)),
    busyPolicy: setting(env.BUSY_POLICY) === "interrupt" ? "interrupt" : "queue",
    platforms,
    relaySecrets,
    relayBufferLimit: Number.isInteger(limit) && limit > 0 ? limit : RELAY_BUFFER_LIMIT,
    attachments: attachmentSettings({ maxBytes: setting(env.ATTACHMENT_MAX_BYTES), transcribeModel: setting(env.LLM_TRANSCRIBE_MODEL), model }),
  };
}

/** A positive whole number, or null (unset or not a number). */
function positiveInt(v: string | undefined): number | null {
  const n = Number(v);
  return v !== undefined && Number.isInteger(n) && n > 0 ? n : null;
}

const cache = new WeakMap<object, Settings>();

/** The Worker's settings: parsed on first use per `env` object (once per isolate), then shared. */
export function settings(env: Env): Settings {
  let s = cache.get(env);
  if (!s) {
    s = parse(env);
    cache.set(env, s);
  }
  return s;
}
