import type { ModelConfig } from "./agent/index.ts";
import { parseMcpServers, tokenSecretName, type EdgeMcpEnv } from "./agent/mcp/index.ts";
import { attachmentSettings, type AttachmentSettings } from "./attachments/index.ts";
import { logger } from "./log/index.ts";
import { adminUsersSetting, allowedUsersSetting, homeChannelSetting, isPlatformName, PLATFORM_INFO, PLATFORMS, type PlatformName } from "./platforms/names.ts";
import { parseRelaySecrets } from "./relay/token.ts";
import type { BusyPolicy } from "./runtime/index.ts";
import { readCatalog, settingProblem, type CatalogValues, type SettingName, type SettingProblem } from "./settings/catalog.ts";

export { CATALOG, type SettingProblem } from "./settings/catalog.ts";

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
  /** Every catalog setting, parsed: what each platform's adapter is built from (the registry reads these, never `env`). */
  values: CatalogValues;
  /** `MCP_SERVERS`, `TOOL_TIMEOUT_MS` (valid, or its default) and the listed servers' `MCP_TOKEN_<NAME>` secrets. */
  mcp: EdgeMcpEnv & Record<string, string | undefined>;
  /** Settings whose values were not understood (each also logged once per isolate). */
  problems: SettingProblem[];
}

/** Frames kept for a gateway that is away (default); past this the oldest are dropped. */
export const RELAY_BUFFER_LIMIT = 10_000;

/** A platform setting by its computed name (`<NAME>_ALLOWED_USERS`, …): text or unset. */
function textSetting(v: CatalogValues, name: string): string | undefined {
  const value = (v as Readonly<Record<string, unknown>>)[name];
  return typeof value === "string" ? value : undefined;
}

/**
 * Which gateway serves each relayed platform, from config only (never from a frame):
 * `RELAY_PLATFORMS` entries are `platform` (served by the first gateway id in
 * RELAY_SECRETS) or `platform:gatewayId`. Entries naming an unknown platform or gateway are
 * ignored, and said.
 */
function relayAssignments(raw: string | undefined, secrets: Map<string, string[]>, problems: SettingProblem[]): Map<PlatformName, string> {
  const ids = [...secrets.keys()];
  const out = new Map<PlatformName, string>();
  for (const entry of list(raw)) {
    const at = entry.indexOf(":");
    const platform = (at < 0 ? entry : entry.slice(0, at)).trim().toLowerCase();
    const gateway = at < 0 ? ids[0] : entry.slice(at + 1).trim();
    if (!isPlatformName(platform))
      problems.push(
        settingProblem("RELAY_PLATFORMS", raw ?? "", `names '${platform}', which is not a platform (${PLATFORMS.join(", ")}): that entry is ignored`),
      );
    else if (gateway === undefined)
      problems.push(
        settingProblem(
          "RELAY_PLATFORMS",
          raw ?? "",
          `relays ${platform} but RELAY_SECRETS names no gateway: ${platform} runs at the edge; set RELAY_SECRETS (gatewayId:secret)`,
        ),
      );
    else if (!ids.includes(gateway))
      problems.push(
        settingProblem(
          "RELAY_PLATFORMS",
          raw ?? "",
          `names the gateway '${gateway}', which RELAY_SECRETS does not list: ${platform} runs at the edge; add ${gateway}:<secret> to RELAY_SECRETS`,
        ),
      );
    else out.set(platform, gateway);
  }
  return out;
}

function parse(env: Env): Settings {
  const { values: v, problems } = readCatalog(env as unknown as Record<string, unknown>);
  const relaySecrets = parseRelaySecrets(v.RELAY_SECRETS);
  const relayed = relayAssignments(v.RELAY_PLATFORMS, relaySecrets, problems);
  const platforms = Object.fromEntries(
    PLATFORMS.map((name) => {
      const info = PLATFORM_INFO[name];
      const missing = info.required.filter((k) => !textSetting(v, k));
      const home = textSetting(v, homeChannelSetting(name));
      const settings: PlatformSettings = {
        name,
        enabled: missing.length === 0,
        missing,
        allowed: allowList(textSetting(v, allowedUsersSetting(name))),
        admins: allowList(textSetting(v, adminUsersSetting(name))),
        envHome: home ? { chatId: home, threadId: (info.homeThread && textSetting(v, info.homeThread)) || null } : null,
        gateway: relayed.get(name) ?? null,
      };
      return [name, settings];
    }),
  ) as Record<PlatformName, PlatformSettings>;
  const model: ModelConfig = {
    provider: v.LLM_PROVIDER,
    ai: env.AI,
    baseUrl: v.LLM_BASE_URL,
    apiKey: v.LLM_API_KEY,
    model: v.LLM_MODEL,
    offlineDelayMs: v.OFFLINE_STREAM_DELAY_MS,
  };
  // MCP_TOKEN_<NAME> secrets are read by computed name, for the servers MCP_SERVERS lists.
  const mcpTokens = parseMcpServers(v.MCP_SERVERS, { source: "MCP_SERVERS", commands: false }).servers.map((s) => tokenSecretName(s.name));
  return {
    apiToken: v.API_TOKEN,
    model,
    systemPrompt: v.SYSTEM_PROMPT,
    contextTokens: v.LLM_CONTEXT_TOKENS,
    dailyTokenBudget: v.DAILY_TOKEN_BUDGET,
    retentionDays: v.RETENTION_DAYS,
    busyPolicy: v.BUSY_POLICY,
    fetchUrlDohUrl: v.FETCH_URL_DOH_URL,
    platforms,
    values: v,
    mcp: {
      MCP_SERVERS: v.MCP_SERVERS,
      TOOL_TIMEOUT_MS: String(v.TOOL_TIMEOUT_MS),
      ...Object.fromEntries(mcpTokens.map((k) => [k, setting((env as unknown as Record<string, string | undefined>)[k])])),
    },
    relaySecrets,
    relayBufferLimit: v.RELAY_BUFFER_LIMIT ?? RELAY_BUFFER_LIMIT,
    attachments: attachmentSettings({
      maxBytes: v.ATTACHMENT_MAX_BYTES === null ? undefined : String(v.ATTACHMENT_MAX_BYTES),
      transcribeModel: v.LLM_TRANSCRIBE_MODEL,
      model,
    }),
    problems,
  };
}

const cache = new WeakMap<object, Settings>();
const logged = new Set<string>();

/** The Worker's settings: parsed on first use per `env` object (once per isolate), then shared. */
export function settings(env: Env): Settings {
  let s = cache.get(env);
  if (!s) {
    s = parse(env);
    cache.set(env, s);
    // Each problem once per isolate (the Worker and its objects may each hold an env object);
    // a message never carries a secret's value.
    for (const p of s.problems) {
      if (logged.has(p.message)) continue;
      logged.add(p.message);
      logger.child("settings").warn(p.message);
    }
  }
  return s;
}
