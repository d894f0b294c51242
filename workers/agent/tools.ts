import { itemAt } from "./item-at.ts";
import { summarizeCall } from "./tool-summary.ts";
import type { ToolCall, ToolSchema } from "./types.ts";
import { errorMessage } from "../log/index.ts";

/** What a tool gets besides its arguments. */
export interface ToolContext {
  signal?: AbortSignal;
  fetch: typeof fetch;
}

/** One callable tool. `run` returns the text given back to the model. */
export interface Tool {
  schema: ToolSchema;
  run(args: Record<string, unknown>, ctx: ToolContext): Promise<string>;
  /** The MCP server the tool comes from; unset for built-in tools. */
  server?: string;
}

/**
 * Tools looked up afresh for each turn (the MCP servers), before its first model call.
 * `list` never throws for a source that is down: its tools are left out and a note says
 * why; the notes are shown to the model for that turn.
 */
export interface ToolSource {
  list(signal?: AbortSignal): Promise<ToolListing>;
}

/** What a {@link ToolSource} offers right now. */
export interface ToolListing {
  tools: Tool[];
  /** Short lines for the model, e.g. "tools of server docs are unavailable: …". */
  notes: string[];
}

/** One line of the `/tools` listing. */
export interface ToolInfo {
  name: string;
  /** The MCP server, or null for a built-in tool. */
  server: string | null;
  /** First line of the description. */
  description: string;
}

/** Most tools offered in one request (OpenAI's limit). */
export const MAX_TOOLS = 128;

/** A tool's answer that reports a failure to the model instead of throwing. */
export function toolError(message: string): string {
  return JSON.stringify({ error: message });
}

/** A fixed set of tools, by name: what one turn can call. */
export class ToolSet {
  readonly #tools = new Map<string, Tool>();
  /** Notes for the model about tools that are missing this turn. */
  readonly notes: readonly string[];

  constructor(tools: readonly Tool[], notes: readonly string[] = []) {
    for (const t of tools) this.#tools.set(t.schema.function.name, t);
    this.notes = notes;
  }

  schemas(): ToolSchema[] {
    return [...this.#tools.values()].map((t) => t.schema);
  }

  /** Name, server and first description line of each tool, for `/tools`. */
  describe(): ToolInfo[] {
    return [...this.#tools.values()].map((t) => ({
      name: t.schema.function.name,
      server: t.server ?? null,
      description: itemAt(t.schema.function.description.split("\n"), 0).trim(),
    }));
  }

  /** A short one-line description of a call for progress events (secrets masked). */
  summary(call: ToolCall): string {
    return summarizeCall(call.function.name, call.function.arguments);
  }

  /** Runs one call. Unknown tools, bad arguments and tool failures become error results. */
  async run(call: ToolCall, ctx: ToolContext): Promise<string> {
    const tool = this.#tools.get(call.function.name);
    if (!tool) return toolError(`unknown tool ${call.function.name}`);
    let args: unknown;
    try {
      args = JSON.parse(call.function.arguments || "{}");
    } catch {
      return toolError("arguments are not valid JSON");
    }
    if (typeof args !== "object" || args === null || Array.isArray(args)) return toolError("arguments must be a JSON object");
    try {
      return await tool.run(args as Record<string, unknown>, ctx);
    } catch (err) {
      if (ctx.signal?.aborted) throw err;
      return toolError(errorMessage(err));
    }
  }
}

/**
 * The tools offered to the model: built-in tools, plus sources listed again for each turn.
 * One registry can serve many sessions at once: each turn gets its own {@link ToolSet}.
 */
export class ToolRegistry extends ToolSet {
  readonly #builtIn: readonly Tool[];
  readonly #sources: readonly ToolSource[];

  constructor(tools: readonly Tool[], sources: readonly ToolSource[] = []) {
    super(tools);
    this.#builtIn = tools;
    this.#sources = sources;
  }

  /**
   * The tools of one turn: the built-in ones and what every source lists now (sources are
   * asked in parallel). A source that fails or is slower than the turn's abort contributes
   * a note instead of tools. Names already taken and tools past {@link MAX_TOOLS} are left
   * out, with a note.
   */
  async forTurn(signal?: AbortSignal): Promise<ToolSet> {
    if (this.#sources.length === 0) return this;
    const listings = await Promise.all(this.#sources.map((s) => listSource(s, signal)));
    const tools = [...this.#builtIn];
    const notes: string[] = [];
    const names = new Set(tools.map((t) => t.schema.function.name));
    let dropped = 0;
    for (const listing of listings) {
      notes.push(...listing.notes);
      for (const t of listing.tools) {
        const name = t.schema.function.name;
        if (names.has(name)) {
          notes.push(`tool ${name} is offered twice; only the first is available`);
        } else if (tools.length >= MAX_TOOLS) {
          dropped++;
        } else {
          names.add(name);
          tools.push(t);
        }
      }
    }
    if (dropped > 0) notes.push(`${dropped} more tools are unavailable: at most ${MAX_TOOLS} tools can be offered at once`);
    return new ToolSet(tools, notes);
  }
}

/** Lists one source; a failure (or the turn's abort) becomes a note, never an exception. */
async function listSource(source: ToolSource, signal?: AbortSignal): Promise<ToolListing> {
  if (signal?.aborted) return { tools: [], notes: [] };
  let onAbort = () => {};
  const aborted = new Promise<ToolListing>((resolve) => {
    onAbort = () => resolve({ tools: [], notes: [] });
    signal?.addEventListener("abort", onAbort, { once: true });
    // A signal aborted before we listened fires no event: act on it now.
    if (signal?.aborted) onAbort();
  });
  try {
    return await Promise.race([source.list(signal), aborted]);
  } catch (err) {
    return { tools: [], notes: [`some tools are unavailable: ${errorMessage(err)}`] };
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
}

/** What the agent can use right now, for the `/tools` chat command, and why others are missing. */
export async function listTools(registry: ToolRegistry, signal?: AbortSignal): Promise<{ tools: ToolInfo[]; notes: readonly string[] }> {
  const set = await registry.forTurn(signal);
  return { tools: set.describe(), notes: set.notes };
}

/** The `/tools` reply: one line per tool (`name (server): description`), then the notes. */
export function formatToolList(listing: { tools: readonly ToolInfo[]; notes: readonly string[] }): string {
  const lines = listing.tools.map((t) => `${t.name}${t.server ? ` (${t.server})` : ""}${t.description ? `: ${t.description}` : ""}`);
  if (lines.length === 0) lines.push("No tools are available.");
  return [...lines, ...listing.notes.map((n) => `(${n})`)].join("\n");
}
