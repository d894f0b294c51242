// The agent core: runs in workerd (SessionAgent) and in Node (the relay gateway).
export {
  DEFAULT_CONTEXT_TOKENS,
  DEFAULT_REPLY_RESERVE,
  MIN_CONTEXT_TOKENS,
  SUMMARY_PREFIX,
  VERBATIM_TURNS,
  parseContextTokens,
  planContext,
  repairKeeping,
  splitTurns,
  type ContextInput,
  type ContextPlan,
  type Turn,
} from "./context.ts";
export { ProviderError, type ProviderErrorCode } from "./errors.ts";
export { forProvider, isOfflineReply } from "./history.ts";
export {
  DEFAULT_SYSTEM_PROMPT,
  SESSION_INSTRUCTIONS_MAX_CHARS,
  contextLine,
  systemMessage,
  type AgentChatType,
  type AgentPlatform,
  type AgentWhere,
  type InstructionsInput,
} from "./instructions.ts";
export { runTurn, type RunTurnOptions, type TurnEvent, type TurnOutcome } from "./loop.ts";
export { abortableSleep, type ChatModel, type ModelRequest, type ModelResult } from "./model.ts";
export { OFFLINE_MODEL_ID, OFFLINE_NOTICE, OfflineModel, offlineReply } from "./offline.ts";
export { OpenAiModel, joinUrl, type OpenAiOptions } from "./openai.ts";
export { MISSING_TOOL_RESULT, repairTranscript, transcriptProblem } from "./repair.ts";
export { SseParser, formatSse, parseSse, type SseEvent } from "./sse.ts";
export { SUMMARY_MAX_TOKENS, SummaryError, extractiveSummary, renderTurns, summarise, summaryPrompt, type SummaryErrorCode } from "./summary.ts";
export { TOKEN_ENCODING, estimateRequestTokens, loadTokenCounter, messageTokens, truncateToTokens, type TokenCounter } from "./tokens.ts";
export { MAX_TOOLS, ToolRegistry, ToolSet, formatToolList, listTools, toolError, type Tool, type ToolContext, type ToolInfo, type ToolListing, type ToolSource } from "./tools.ts";
export { fetchUrlTool, isBlockedHost, type FetchUrlLimits, type FetchUrlOptions } from "./fetch-url.ts";
export { DEFAULT_DOH_URL, dohResolver, type Resolver } from "./resolve.ts";
export { SUMMARY_MAX_CHARS, isSecretKey, maskSecrets, summarizeCall } from "./tool-summary.ts";
export { DEFAULT_OPENAI_MODEL, PROVIDERS, createModel, modelId, resolveProvider, toolsFor, type ModelConfig, type ProviderName } from "./factory.ts";
export { PROBE_TIMEOUT_MS, probeModel, type ModelProbe } from "./probe.ts";
export { DEFAULT_WORKERS_AI_MODEL, WorkersAiModel, workersAiError, type AiBinding, type WorkersAiOptions } from "./workers-ai.ts";
export type { ChatMessage, FinishReason, RawMessage, Role, ToolCall, ToolSchema, Usage } from "./types.ts";
