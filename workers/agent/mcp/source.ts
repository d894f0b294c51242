import type { Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import { toolError, type Tool, type ToolListing, type ToolSource } from "../tools.ts";
import { McpServerConnection, McpUnavailable, raceAbort, systemClock, type Clock, type ServerOptions } from "./connection.ts";
import { DEFAULT_MAX_RESULT_CHARS, formatCallResult, type Redactor } from "./result.ts";
import { namespacedName, sanitiseInputSchema, toolDescription } from "./schema.ts";
import { errorMessage, logger } from "../../log/index.ts";

/** Default limit of one tool call (`TOOL_TIMEOUT_MS`). */
export const DEFAULT_TOOL_TIMEOUT_MS = 30_000;
/** Default limit of connecting to a server and listing its tools. */
export const DEFAULT_LIST_TIMEOUT_MS = 10_000;
/** How long a server's tool list is reused before it is asked again. */
export const DEFAULT_TOOLS_TTL_MS = 5 * 60_000;
/** Most tools taken from one server. */
export const MAX_TOOLS_PER_SERVER = 64;

/** Limits and hooks shared by every server of a source. */
export interface McpSourceOptions {
  clock?: Clock;
  callTimeoutMs?: number;
  listTimeoutMs?: number;
  ttlMs?: number;
  maxResultChars?: number;
  /** Where failures are reported (redacted); default the logger's `[mcp]` warnings. */
  log?: (line: string) => void;
  /** A server sent `notifications/tools/list_changed` (its next listing asks again). */
  onListChanged?: (server: string) => void;
}

/** How to reach one server, without the hooks the source adds itself. */
export type ServerSpec = Omit<ServerOptions, "clock" | "callTimeoutMs" | "listTimeoutMs" | "onListChanged" | "onClosed"> & {
  /** Extra detail for the log when the server fails (a child's stderr, say). */
  diagnostics?: () => string;
};

interface Cached {
  tools: Tool[];
  at: number;
  /** Bumped by `notifications/tools/list_changed`; a listing from an older generation is stale. */
  generation: number;
}

interface ServerState {
  spec: ServerSpec;
  connection: McpServerConnection;
  generation: number;
  cached: Cached | null;
  refreshing: Promise<Tool[]> | null;
}

/**
 * The MCP tools of one session object (or of the gateway): every configured server's
 * tools, listed on first use and cached until the server says the list changed or the TTL
 * passes. A server that is down contributes a note for the model, never a failed turn.
 */
export class McpToolSource implements ToolSource {
  readonly #servers: ServerState[];
  readonly #problems: readonly string[];
  readonly #clock: Clock;
  readonly #ttlMs: number;
  readonly #maxResultChars: number;
  readonly #log: (line: string) => void;

  constructor(specs: readonly ServerSpec[], problems: readonly string[], opts: McpSourceOptions = {}) {
    this.#clock = opts.clock ?? systemClock;
    this.#ttlMs = opts.ttlMs ?? DEFAULT_TOOLS_TTL_MS;
    this.#maxResultChars = opts.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS;
    this.#log = opts.log ?? ((line) => logger.child("mcp").warn(line));
    this.#problems = problems;
    const callTimeoutMs = opts.callTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
    const listTimeoutMs = opts.listTimeoutMs ?? Math.min(callTimeoutMs, DEFAULT_LIST_TIMEOUT_MS);
    this.#servers = specs.map((spec) => {
      const state: Omit<ServerState, "connection"> = { spec, generation: 0, cached: null, refreshing: null };
      const connection = new McpServerConnection({
        ...spec,
        clock: this.#clock,
        callTimeoutMs,
        listTimeoutMs,
        onListChanged: () => {
          state.generation++;
          opts.onListChanged?.(spec.name);
        },
        onClosed: () => {
          state.cached = null;
          this.#report(state.spec, "the connection closed");
        },
      });
      return Object.assign(state, { connection });
    });
    for (const p of problems) this.#log(`mcp: ${p}`);
  }

  /** Names of the configured servers that are usable (valid config). */
  get serverNames(): string[] {
    return this.#servers.map((s) => s.spec.name);
  }

  async list(signal?: AbortSignal): Promise<ToolListing> {
    const notes = this.#problems.map((p) => `some tools are unavailable: ${p}`);
    const results = await Promise.all(this.#servers.map(async (s) => ({ server: s, r: await this.#toolsOf(s, signal) })));
    const tools: Tool[] = [];
    for (const { server, r } of results) {
      if (Array.isArray(r)) tools.push(...r);
      else notes.push(`tools of server ${server.spec.name} are unavailable: ${r.reason}`);
    }
    return { tools, notes };
  }

  /** Stops every connection (child processes included). */
  async close(): Promise<void> {
    await Promise.all(this.#servers.map((s) => s.connection.close()));
  }

  async #toolsOf(state: ServerState, signal?: AbortSignal): Promise<Tool[] | { reason: string }> {
    const c = state.cached;
    if (c && c.generation === state.generation && this.#clock.now() - c.at < this.#ttlMs) return c.tools;
    state.refreshing ??= this.#refresh(state).finally(() => (state.refreshing = null));
    try {
      const pending = state.refreshing;
      return await (signal ? raceAbort(pending, signal) : pending);
    } catch (err) {
      if (signal?.aborted) return { reason: "the turn was stopped" };
      const reason = err instanceof McpUnavailable ? err.message : state.spec.redact(String(err));
      return { reason };
    }
  }

  async #refresh(state: ServerState): Promise<Tool[]> {
    const generation = state.generation;
    const at = this.#clock.now();
    let listed: McpTool[];
    try {
      // Its own deadline, not the turn's signal: other turns may wait on the same listing.
      listed = await state.connection.listTools();
    } catch (err) {
      state.cached = null;
      this.#report(state.spec, errorMessage(err));
      throw err;
    }
    const tools = listed.slice(0, MAX_TOOLS_PER_SERVER).map((t) => this.#tool(state, t));
    state.cached = { tools, at, generation };
    return tools;
  }

  #tool(state: ServerState, t: McpTool): Tool {
    const server = state.spec.name;
    const redact: Redactor = state.spec.redact;
    return {
      server,
      schema: {
        type: "function",
        function: {
          name: namespacedName(server, t.name),
          description: toolDescription(t.description, `${t.name} (from the MCP server ${server})`),
          parameters: sanitiseInputSchema(t.inputSchema),
        },
      },
      run: async (args, ctx) => {
        try {
          const result = await state.connection.callTool(t.name, args, ctx.signal);
          return formatCallResult(result, { maxChars: this.#maxResultChars, redact });
        } catch (err) {
          if (ctx.signal?.aborted) throw err;
          const reason = err instanceof McpUnavailable ? err.message : redact(String(err));
          this.#report(state.spec, `${t.name}: ${reason}`);
          return toolError(`${server}: ${reason}`);
        }
      },
    };
  }

  #report(spec: ServerSpec, reason: string): void {
    const extra = spec.diagnostics?.() ?? "";
    this.#log(spec.redact(`mcp: server ${spec.name}: ${reason}${extra ? `\n${extra}` : ""}`));
  }
}
