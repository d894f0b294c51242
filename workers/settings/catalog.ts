import { DEFAULT_CONTEXT_TOKENS, DEFAULT_DOH_URL, MIN_CONTEXT_TOKENS, PROVIDERS } from "../agent/index.ts";
import { DEFAULT_TOOL_TIMEOUT_MS, parseMcpServers, parseToolTimeout } from "../agent/mcp/index.ts";
import { DEFAULT_ATTACHMENT_MAX_BYTES } from "../attachments/index.ts";
import { commaList, hex, httpUrl, milliseconds, oneOf, positiveWhole, text, wholeAtLeast, type Parser } from "./parse.ts";
import { PLATFORM_CATALOG } from "./platform-catalog.ts";
import { spec, type SettingSpec } from "./spec.ts";

export type { SettingSpec } from "./spec.ts";

const mcpServers: Parser<string | undefined> = (raw) => {
  const problems = parseMcpServers(raw, { source: "MCP_SERVERS", commands: false }).problems;
  return problems.length === 0 ? { value: raw } : { value: raw, problem: `has problems (the good entries are used): ${problems.join("; ")}` };
};

const toolTimeout: Parser<number> = (raw) => {
  const r = parseToolTimeout(raw);
  return r.problem
    ? { value: r.ms, problem: `is not a whole number of milliseconds up to 600000: ${r.ms} is used; write a number such as 30000` }
    : { value: r.ms };
};

const provider: Parser<string | undefined> = (raw) =>
  raw === undefined || (PROVIDERS as readonly string[]).includes(raw.toLowerCase())
    ? { value: raw }
    : { value: raw, problem: `is not one of ${PROVIDERS.join(", ")}: every turn fails with provider_not_configured; write one of them, or leave it empty` };

const relaySecrets: Parser<string | undefined> = (raw) => {
  const bad = commaList(raw).filter((item) => {
    const at = item.indexOf(":");
    return at <= 0 || item.slice(0, at).trim() === "" || item.slice(at + 1).trim() === "";
  }).length;
  return bad === 0
    ? { value: raw }
    : {
        value: raw,
        problem: `has ${bad} entr${bad === 1 ? "y" : "ies"} that ${bad === 1 ? "is" : "are"} not gatewayId:secret and ${bad === 1 ? "is" : "are"} ignored; write gatewayId:secret pairs separated by commas`,
      };
};

const budgetOff = "the budget is off (unlimited)";

/**
 * Every setting the Worker reads, one entry each (a name with `<NAME>` stands for a family
 * read by computed name). To add one: an entry here (a parser from ./parse.ts), its row in README's configuration table, the name in
 * wrangler.toml [vars] (a var) or in .dev.vars.example and workers/env.d.ts (a secret), then
 * read it in workers/settings.ts and pass the value in (test/node/settings-catalog.test.ts
 * checks all of these). A new platform's names (SPEC section 9: WHATSAPP_*, MATRIX_*,
 * DISCORD_GATEWAY, BRIDGE_PLATFORMS) join with its adapter, under its own group, so that
 * declaring them never enables anything before the code that reads them exists.
 */
export const CATALOG = {
  API_TOKEN: spec({
    kind: "secret",
    group: "core",
    meaning: "bearer token for /v1/*, the CLI and the console; unset: /v1/* answers 503 not_configured",
    parse: text,
  }),
  SYSTEM_PROMPT: spec({ kind: "var", group: "core", meaning: "the agent's instructions", default: "a built-in default", parse: text }),
  BUSY_POLICY: spec({
    kind: "var",
    group: "core",
    meaning: "queue: a message sent during a turn waits; interrupt: it stops the running turn",
    default: "queue",
    parse: oneOf(["queue", "interrupt"], "queue"),
  }),
  RETENTION_DAYS: spec({
    kind: "var",
    group: "core",
    meaning: "the cron deletes messages and attachments older than this many days",
    default: "kept",
    parse: positiveWhole({ unset: null, fallback: null, whenBad: "nothing is deleted", example: "90" }),
  }),

  LLM_PROVIDER: spec({
    kind: "var",
    group: "model",
    meaning: "openai, workers-ai (the AI binding) or offline",
    default: "openai with LLM_BASE_URL, else offline",
    parse: provider,
  }),
  LLM_BASE_URL: spec({
    kind: "var",
    group: "model",
    meaning: "OpenAI-compatible provider (POST {LLM_BASE_URL}/chat/completions)",
    default: "the offline model",
    hideValue: true,
    parse: httpUrl(undefined, "it is ignored (the offline model answers unless LLM_PROVIDER says otherwise)"),
  }),
  LLM_API_KEY: spec({ kind: "secret", group: "model", meaning: "sent as Authorization: Bearer to the provider", parse: text }),
  LLM_MODEL: spec({
    kind: "var",
    group: "model",
    meaning: "the model name sent to the provider",
    default: "gpt-4o-mini (Workers AI: its default model)",
    parse: text,
  }),
  LLM_CONTEXT_TOKENS: spec({
    kind: "var",
    group: "model",
    meaning: "token budget of one model request; older turns fold into a summary",
    default: String(DEFAULT_CONTEXT_TOKENS),
    parse: wholeAtLeast({ min: MIN_CONTEXT_TOKENS, fallback: DEFAULT_CONTEXT_TOKENS, example: "32000" }),
  }),
  OFFLINE_STREAM_DELAY_MS: spec({
    kind: "var",
    group: "model",
    meaning: "offline model: pause between streamed words",
    default: "15",
    parse: milliseconds("the default 15 is used"),
  }),

  MCP_SERVERS: spec({ kind: "var", group: "tools", meaning: 'remote MCP servers: JSON list [{"name","url"}]', hideValue: true, parse: mcpServers }),
  "MCP_TOKEN_<NAME>": spec({
    kind: "secret",
    group: "tools",
    meaning: "bearer token of the MCP server <name> (upper-cased, other characters as _)",
    parse: text,
  }),
  TOOL_TIMEOUT_MS: spec({ kind: "var", group: "tools", meaning: "limit of one MCP tool call", default: String(DEFAULT_TOOL_TIMEOUT_MS), parse: toolTimeout }),

  FETCH_URL_DOH_URL: spec({
    kind: "var",
    group: "tools",
    meaning: "DNS-over-HTTPS (JSON) endpoint fetch_url resolves host names with; names that do not resolve to public addresses are refused",
    default: DEFAULT_DOH_URL,
    parse: httpUrl(DEFAULT_DOH_URL, `the default ${DEFAULT_DOH_URL} is used`),
  }),

  DAILY_TOKEN_BUDGET: spec({
    kind: "var",
    group: "limits",
    meaning: "tokens per platform user per UTC day",
    default: "unlimited",
    parse: positiveWhole({ unset: null, fallback: null, whenBad: budgetOff, example: "10000" }),
  }),

  ...PLATFORM_CATALOG,

  RELAY_PLATFORMS: spec({ kind: "var", group: "relay", meaning: "platforms whose turns run on a relay gateway: platform or platform:gatewayId", parse: text }),
  BRIDGE_PLATFORMS: spec({
    kind: "var",
    group: "relay",
    meaning: "platforms a gateway bridges to the edge (the edge runs their turns): signal:<gatewayId>",
    parse: text,
  }),
  RELAY_SECRETS: spec({
    kind: "secret",
    group: "relay",
    meaning: "gatewayId:secret pairs accepted on /relay (several per id, for rotation)",
    parse: relaySecrets,
  }),
  RELAY_BUFFER_LIMIT: spec({
    kind: "var",
    group: "relay",
    meaning: "frames kept per gateway while it is away",
    default: "10000",
    parse: positiveWhole({ unset: null, fallback: null, whenBad: "the default 10000 is used", example: "10000" }),
  }),

  ATTACHMENT_MAX_BYTES: spec({
    kind: "var",
    group: "attachments",
    meaning: "largest attachment fetched from a platform",
    default: String(DEFAULT_ATTACHMENT_MAX_BYTES),
    parse: positiveWhole({
      unset: null,
      fallback: null,
      whenBad: `the default ${DEFAULT_ATTACHMENT_MAX_BYTES} is used`,
      example: String(DEFAULT_ATTACHMENT_MAX_BYTES),
    }),
  }),
  LLM_TRANSCRIBE_MODEL: spec({
    kind: "var",
    group: "attachments",
    meaning: "speech-to-text model for voice notes (POST {LLM_BASE_URL}/audio/transcriptions)",
    parse: text,
  }),
};

export type SettingName = keyof typeof CATALOG;

/**
 * How a setting is declared, from its catalog entry: a secret (`wrangler secret put`
 * deployed, `.dev.vars` locally) or a var (`[vars]` in wrangler.toml); `MCP_TOKEN_<NAME>`
 * names are the family's. A name the catalog lacks is a var.
 */
export function settingKind(name: string): "secret" | "var" {
  const entry = name.startsWith("MCP_TOKEN_") ? CATALOG["MCP_TOKEN_<NAME>"] : (CATALOG as Record<string, SettingSpec | undefined>)[name];
  return entry?.kind ?? "var";
}

/**
 * The names the catalog declares as secrets: workers/env.d.ts types them on `Env` (knip does not
 * see that type import, hence @public).
 * @public
 */
export type SecretName = {
  [K in SettingName]: (typeof CATALOG)[K]["kind"] extends "secret" ? (K extends `${string}<${string}` ? never : K) : never;
}[SettingName];

/** The values of every (non-family) setting, as their parsers made them. */
export type CatalogValues = { [K in SettingName]: (typeof CATALOG)[K] extends SettingSpec<infer T> ? T : never };

/**
 * A setting whose value was not understood: which one, its value (never a secret's, nor
 * one marked `hideValue`), and a sentence saying what is wrong, what the Worker does
 * instead and what to write.
 */
export interface SettingProblem {
  setting: string;
  value: string | null;
  message: string;
}

/** A problem from a setting's raw value, worded so that a secret is never repeated. */
export function settingProblem(name: string, raw: string, problem: string): SettingProblem {
  const entry = (CATALOG as Record<string, SettingSpec>)[name];
  const shown = entry?.kind === "secret" || entry?.hideValue ? null : raw;
  return { setting: name, value: shown, message: shown === null ? `${name} (value not shown) ${problem}` : `${name}=${shown} ${problem}` };
}

/** Every setting of the catalog read from `env` (trimmed; empty means unset): the values, and the problems. */
export function readCatalog(env: Readonly<Record<string, unknown>>): { values: CatalogValues; problems: SettingProblem[] } {
  const values: Record<string, unknown> = {};
  const problems: SettingProblem[] = [];
  for (const [name, entry] of Object.entries(CATALOG) as Array<[string, SettingSpec]>) {
    if (name.includes("<")) continue;
    const v = env[name];
    const raw = typeof v === "string" && v.trim() !== "" ? v.trim() : undefined;
    const r = entry.parse(raw);
    values[name] = r.value;
    if (r.problem && raw !== undefined) problems.push(settingProblem(name, raw, r.problem));
  }
  return { values: values as CatalogValues, problems };
}
