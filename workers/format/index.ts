/**
 * Markdown rendering for chat platforms: one CommonMark/GFM parse, rendered per dialect,
 * split to a platform's limit, with a streaming preview mode. Pure and runtime-neutral
 * (workerd and Node). See docs/formatting.md.
 */
export { displayWidth, measure } from "./measure.ts";
export { plainPart, renderMessage, renderPlain } from "./render.ts";
export { renderTerminal } from "./terminal.ts";
export { TerminalStream } from "./terminal-stream.ts";
export { MIN_LIMIT } from "./types.ts";
export type { Dialect, LengthUnit, RenderedPart, TelegramEntity } from "./types.ts";
