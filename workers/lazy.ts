/**
 * The modules a cold isolate does not need, loaded on first use. Each is bundled by
 * workers/lazy/build.mjs into workers/lazy/<name>.js and uploaded beside the main module
 * (wrangler.toml: find_additional_modules and the ESModule rule for lazy/*.js), so wrangler
 * leaves the `import()` to the runtime. The specifiers are relative to this file, which sits
 * where the main module's output does, so they resolve the same after bundling. Vitest
 * (vitest.config.ts) and the CLI's bundle (cli/build.mjs) resolve them to the packages
 * themselves. docs/startup.md says what is here and why.
 */

/** pdf.js, through unpdf's serverless build (about 2.4 MB): only when a PDF arrives. */
export function loadPdfjs(): Promise<typeof import("./lazy/pdf.js")> {
  return import("./lazy/pdf.js");
}

/** The MCP SDK's client, transports and JSON-schema validator: only when MCP_SERVERS names a server and a turn uses it. */
export function loadMcpSdk(): Promise<typeof import("./lazy/mcp.js")> {
  return import("./lazy/mcp.js");
}

export type McpSdk = Awaited<ReturnType<typeof loadMcpSdk>>;
