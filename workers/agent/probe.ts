import { DEFAULT_OPENAI_MODEL, modelId, resolveProvider, type ModelConfig } from "./factory.ts";
import { joinUrl } from "./openai.ts";
import { errorMessage } from "../log/index.ts";

/** How the configured model provider answers, for `hermes-edge status`. */
export interface ModelProbe {
  provider: string;
  model: string;
  /** One line of what was found. */
  detail: string;
  /** What is wrong and how to fix it; null when nothing is. */
  problem: { problem: string; fix: string } | null;
}

/** How long the provider may take to answer the probe. */
export const PROBE_TIMEOUT_MS = 10_000;

/**
 * Asks the provider a question that costs nothing: `GET {LLM_BASE_URL}/models` with the key
 * (OpenAI-compatible servers list their models there). 401/403 means the key is refused; a
 * server without the route (404) still answered. Never throws.
 */
export async function probeModel(cfg: ModelConfig, fetchImpl: typeof fetch): Promise<ModelProbe> {
  const r = resolveProvider(cfg);
  const model = modelId(cfg);
  if (!r.ok)
    return {
      provider: cfg.provider ?? "?",
      model,
      detail: "not configured",
      problem: { problem: r.error, fix: "fix LLM_PROVIDER / LLM_BASE_URL in wrangler.toml's [vars] (or .dev.vars locally)" },
    };
  if (r.provider === "offline") return { provider: "offline", model, detail: "the built-in offline model (canned replies)", problem: null };
  if (r.provider === "workers-ai") return { provider: "workers-ai", model, detail: "Workers AI through the AI binding", problem: null };
  const url = joinUrl(r.baseUrl, "models");
  try {
    const res = await fetchImpl(url, { headers: cfg.apiKey ? { authorization: `Bearer ${cfg.apiKey}` } : {}, signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    if (res.status === 401 || res.status === 403) {
      return {
        provider: "openai",
        model,
        detail: `refused the key (HTTP ${res.status})`,
        problem: { problem: `${cfg.baseUrl} refused LLM_API_KEY (HTTP ${res.status})`, fix: "set the right key: npx wrangler secret put LLM_API_KEY" },
      };
    }
    if (res.status >= 500)
      return {
        provider: "openai",
        model,
        detail: `HTTP ${res.status}`,
        problem: { problem: `${cfg.baseUrl} answers HTTP ${res.status}`, fix: "the provider is failing: try again later" },
      };
    if (!res.ok) return { provider: "openai", model, detail: `answers (no model list: HTTP ${res.status})`, problem: null };
    const body = (await res.json().catch(() => null)) as { data?: Array<{ id?: unknown }> } | null;
    const ids = Array.isArray(body?.data) ? body.data.map((m) => String(m.id)) : [];
    const wanted = cfg.model || DEFAULT_OPENAI_MODEL;
    if (ids.length > 0 && !ids.includes(wanted)) {
      return {
        provider: "openai",
        model,
        detail: `answers; ${ids.length} model(s) listed`,
        problem: { problem: `${cfg.baseUrl} does not list the model ${wanted}`, fix: `set LLM_MODEL to one it lists (e.g. ${ids.slice(0, 3).join(", ")})` },
      };
    }
    return { provider: "openai", model, detail: ids.length > 0 ? `answers; lists ${wanted}` : "answers", problem: null };
  } catch (err) {
    return {
      provider: "openai",
      model,
      detail: "not reachable",
      problem: { problem: `cannot reach ${cfg.baseUrl}: ${errorMessage(err)}`, fix: "check LLM_BASE_URL" },
    };
  }
}
