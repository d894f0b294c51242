import { OFFLINE_MODEL_ID, OfflineModel } from "./offline.ts";
import { fetchUrlTool, type FetchUrlOptions } from "./fetch-url.ts";
import { ToolRegistry } from "./tools.ts";
import { OpenAiModel } from "./openai.ts";
import type { ChatModel } from "./model.ts";

/** Model settings shared by the Worker (`env`) and the gateway (`process.env`). */
export interface ModelConfig {
  baseUrl?: string | undefined;
  apiKey?: string | undefined;
  model?: string | undefined;
  /** Offline model: pause between streamed words, in ms. */
  offlineDelayMs?: number | undefined;
}

/** The OpenAI-compatible client when a base URL is set, else the offline model. */
export function createModel(cfg: ModelConfig, fetchImpl?: typeof fetch): ChatModel {
  if (!cfg.baseUrl) return new OfflineModel(cfg.offlineDelayMs !== undefined ? { delayMs: cfg.offlineDelayMs } : {});
  return new OpenAiModel({
    baseUrl: cfg.baseUrl,
    model: cfg.model || "gpt-4o-mini",
    ...(cfg.apiKey ? { apiKey: cfg.apiKey } : {}),
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
  });
}

/** The tools offered to real models. The offline model never calls tools, so it gets none. */
export function toolsFor(model: ChatModel, opts: FetchUrlOptions = {}): ToolRegistry | undefined {
  return model.id === OFFLINE_MODEL_ID ? undefined : new ToolRegistry([fetchUrlTool({}, opts)]);
}
