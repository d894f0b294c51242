/** What the adapter uses of grammY. */
export type Grammy = typeof import("./grammy-api.ts");

/**
 * grammY, evaluated on the first Telegram API call rather than at start-up: its top level
 * looks at `process` (which makes workerd load its Node process polyfill) and sets up the
 * `debug` package it bundles, about a tenth of a cold isolate's start-up (docs/startup.md).
 * It stays in the main module: esbuild wraps it, and this `import()` runs its top level
 * synchronously inside the caller's own promise, so no pending load is shared between
 * callers or Durable Objects.
 */
export function loadGrammy(): Promise<Grammy> {
  return import("./grammy-api.ts");
}
