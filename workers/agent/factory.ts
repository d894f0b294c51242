import { ProviderError } from "./errors.ts";
import { fetchUrlTool, type FetchUrlOptions } from "./fetch-url.ts";
import type { ChatModel } from "./model.ts";
import { OFFLINE_MODEL_ID, OfflineModel } from "./offline.ts";
import { OpenAiModel } from "./openai.ts";
import { dohResolver } from "./resolve.ts";
import { ToolRegistry, type ToolSource } from "./tools.ts";
import { DEFAULT_WORKERS_AI_MODEL, WorkersAiModel, type AiBinding } from "./workers-ai.ts";

/** The providers `LLM_PROVIDER` can name. */
export const PROVIDERS = ["openai", "workers-ai", "offline"] as const;

/** Model the OpenAI-compatible client asks for when `LLM_MODEL` is unset. */
export const DEFAULT_OPENAI_MODEL = "gpt-4o-mini";

/** Model settings shared by the Worker (`env`) and the gateway (`process.env`). */
export interface ModelConfig {
  /** `LLM_PROVIDER`; unset: `openai` when `baseUrl` is set, else `offline`. */
  provider?: string | undefined;
  baseUrl?: string | undefined;
  apiKey?: string | undefined;
  model?: string | undefined;
  /** Offline model: pause between streamed words, in ms. */
  offlineDelayMs?: number | undefined;
  /** The Workers AI binding (`env.AI`), passed in by the Worker; the gateway has none. */
  ai?: AiBinding | undefined;
}

/** The provider a config selects, or a one-line reason it cannot run here. */
export function resolveProvider(cfg: ModelConfig): ({ ok: true } & ResolvedProvider) | { ok: false; error: string } {
  const named = cfg.provider?.trim().toLowerCase();
  if (!named) return cfg.baseUrl ? { ok: true, provider: "openai", baseUrl: cfg.baseUrl } : { ok: true, provider: "offline" };
  if (!(PROVIDERS as readonly string[]).includes(named))
    return { ok: false, error: `LLM_PROVIDER must be one of ${PROVIDERS.join(", ")} (got '${cfg.provider}')` };
  if (named === "openai") {
    if (cfg.baseUrl) return { ok: true, provider: "openai", baseUrl: cfg.baseUrl };
    return { ok: false, error: "LLM_PROVIDER=openai needs LLM_BASE_URL (an OpenAI-compatible endpoint)" };
  }
  if (named === "workers-ai") {
    if (cfg.ai) return { ok: true, provider: "workers-ai", ai: cfg.ai };
    return {
      ok: false,
      error:
        'LLM_PROVIDER=workers-ai needs the Workers AI binding: add [ai] binding = "AI" to wrangler.toml (only the Worker has it; locally `wrangler dev` reaches it through your Cloudflare account)',
    };
  }
  return { ok: true, provider: "offline" };
}

/** A runnable provider, with what it runs on: the endpoint (openai) or the binding (workers-ai). */
type ResolvedProvider = { provider: "openai"; baseUrl: string } | { provider: "workers-ai"; ai: AiBinding } | { provider: "offline" };

/** The model name a session records for this config ("offline" for the built-in model). */
export function modelId(cfg: ModelConfig): string {
  const r = resolveProvider(cfg);
  if (!r.ok || r.provider === "offline") return OFFLINE_MODEL_ID;
  return cfg.model || (r.provider === "workers-ai" ? DEFAULT_WORKERS_AI_MODEL : DEFAULT_OPENAI_MODEL);
}

/**
 * The model `cfg` selects: the OpenAI-compatible client, Workers AI through its binding, or
 * the offline model. A config that cannot run here (see {@link resolveProvider}) throws a
 * {@link ProviderError} with code `provider_not_configured`.
 */
export function createModel(cfg: ModelConfig, fetchImpl?: typeof fetch): ChatModel {
  const r = resolveProvider(cfg);
  if (!r.ok) throw new ProviderError("provider_not_configured", r.error);
  if (r.provider === "workers-ai") return new WorkersAiModel({ ai: r.ai, model: cfg.model || DEFAULT_WORKERS_AI_MODEL });
  if (r.provider === "offline") return new OfflineModel(cfg.offlineDelayMs !== undefined ? { delayMs: cfg.offlineDelayMs } : {});
  return new OpenAiModel({
    baseUrl: r.baseUrl,
    model: cfg.model || DEFAULT_OPENAI_MODEL,
    ...(cfg.apiKey ? { apiKey: cfg.apiKey } : {}),
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
  });
}

/**
 * The tools offered to real models: `fetch_url`, plus the given sources (MCP servers),
 * listed at the start of each turn. The offline model never calls tools, so it gets none.
 * `fetch_url` always resolves names before fetching: with `resolve`, or else over
 * DNS-over-HTTPS at its default endpoint.
 */
export function toolsFor(model: ChatModel, opts: FetchUrlOptions & { sources?: readonly ToolSource[] } = {}): ToolRegistry | undefined {
  const { sources = [], ...fetchOpts } = opts;
  return model.id === OFFLINE_MODEL_ID
    ? undefined
    : new ToolRegistry([fetchUrlTool({}, { ...fetchOpts, resolve: fetchOpts.resolve ?? dohResolver() })], sources);
}
