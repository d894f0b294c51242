// The agent core: runs in workerd (SessionAgent) and in Node (the relay gateway).
export {
  DEFAULT_CONTEXT_TOKENS,
  MIN_CONTEXT_TOKENS,
  SUMMARY_PREFIX,
  VERBATIM_TURNS,
  parseContextTokens,
  planContext,
  splitTurns,
  type ContextInput,
  type ContextPlan,
} from "./context.ts";
export { ProviderError } from "./errors.ts";
export { forProvider, isOfflineReply } from "./history.ts";
export {
  DEFAULT_SYSTEM_PROMPT,
  SESSION_INSTRUCTIONS_MAX_CHARS,
  systemMessage,
  type AgentChatType,
  type AgentPlatform,
  type AgentWhere,
} from "./instructions.ts";
export { runTurn, type TurnEvent, type TurnOutcome } from "./loop.ts";
export type { ChatModel, ModelRequest, ModelResult } from "./model.ts";
export { OFFLINE_MODEL_ID, OFFLINE_NOTICE, OfflineModel, offlineReply } from "./offline.ts";
export { OpenAiModel, joinUrl } from "./openai.ts";
export { MISSING_TOOL_RESULT, repairTranscript, transcriptProblem } from "./repair.ts";
export { SseParser, formatSse, parseSse, type SseEvent } from "./sse.ts";
export { SUMMARY_MAX_TOKENS, SummaryError, extractiveSummary, summarise, summaryPrompt } from "./summary.ts";
export { calibratedRatio, ESTIMATE, estimateRequestTokens, estimatingCounter, requestTokens, truncateToTokens, type TokenCounter } from "./tokens.ts";
export { ToolRegistry, formatToolList, listTools, toolError, type Tool, type ToolListing, type ToolSource } from "./tools.ts";
export { fetchUrlTool, isBlockedHost } from "./fetch-url.ts";
export { DEFAULT_DOH_URL, dohResolver, type Resolver } from "./resolve.ts";
export { summarizeCall } from "./tool-summary.ts";
export { PROVIDERS, createModel, modelId, resolveProvider, toolsFor, type ModelConfig } from "./factory.ts";
export { probeModel } from "./probe.ts";
export { WorkersAiModel } from "./workers-ai.ts";
export type { ChatMessage, RawMessage, ToolCall, ToolSchema, Usage } from "./types.ts";
