import { PLATFORM_LABEL, isPlatformName } from "../platforms/names.ts";
import type { Capabilities } from "../platforms/types.ts";
import type { Descriptor } from "./frames.ts";

/** Ops the connector runs for gateways. */
export const SUPPORTED_OPS = ["send", "edit", "typing", "thread_create"];

/** A platform's capabilities as the gateway needs them, and the daily token budget it keeps. Replies are sent as Markdown and rendered here. */
export function descriptorFor(platform: string, caps: Capabilities, dailyTokenBudget: number | null = null): Descriptor {
  return {
    contract_version: 1,
    platform,
    label: isPlatformName(platform) ? PLATFORM_LABEL[platform] : platform,
    max_message_length: caps.maxMessageLength,
    len_unit: caps.lengthUnit === "utf16" ? "utf16" : "chars",
    supports_edit: caps.edits,
    supports_threads: caps.threads,
    supports_draft_streaming: false,
    markdown_dialect: "commonmark",
    supported_ops: SUPPORTED_OPS,
    edit_interval_ms: caps.editIntervalMs,
    daily_token_budget: dailyTokenBudget,
  };
}
