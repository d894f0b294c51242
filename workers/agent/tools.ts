import type { ToolCall, ToolSchema } from "./types.ts";

/** What a tool gets besides its arguments. */
export interface ToolContext {
  signal?: AbortSignal;
  fetch: typeof fetch;
}

/** One callable tool. `run` returns the text given back to the model. */
export interface Tool {
  schema: ToolSchema;
  run(args: Record<string, unknown>, ctx: ToolContext): Promise<string>;
}

/** A tool's answer that reports a failure to the model instead of throwing. */
export function toolError(message: string): string {
  return JSON.stringify({ error: message });
}

/** The tools offered to the model, by name. */
export class ToolRegistry {
  readonly #tools = new Map<string, Tool>();

  constructor(tools: readonly Tool[]) {
    for (const t of tools) this.#tools.set(t.schema.function.name, t);
  }

  schemas(): ToolSchema[] {
    return [...this.#tools.values()].map((t) => t.schema);
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
      return toolError(err instanceof Error ? err.message : String(err));
    }
  }
}

/** Limits of {@link fetchUrlTool}. */
export interface FetchUrlLimits {
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
  maxChars: number;
}

const DEFAULT_LIMITS: FetchUrlLimits = { maxBytes: 256 * 1024, timeoutMs: 10_000, maxRedirects: 3, maxChars: 20_000 };

const TEXT_TYPES = /^(text\/|application\/(json|xml|javascript|xhtml\+xml|[\w.+-]+\+(json|xml))\b)/i;

/**
 * True for hosts the tool must never reach: loopback, private, link-local and other
 * non-public literal addresses, and local names. (Names that resolve to private addresses
 * are beyond a literal check; the Workers runtime cannot reach those anyway.)
 */
export function isBlockedHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  if (h === "localhost" || h.endsWith(".localhost") || h.endsWith(".local") || h.endsWith(".internal")) return true;
  const v4 = h.match(/^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/);
  if (v4) {
    const [a, b] = [Number(v4[1]), Number(v4[2])];
    return a === 0 || a === 10 || a === 127 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127) || a >= 224;
  }
  if (h.includes(":")) {
    return h === "::" || h === "::1" || h.startsWith("fc") || h.startsWith("fd") || h.startsWith("fe80") || h.startsWith("::ffff:");
  }
  return false;
}

function htmlToText(html: string): string {
  return html
    .replace(/<(script|style|noscript)[^>]*>[\s\S]*?<\/\1>/gi, " ")
    .replace(/<br\s*\/?>|<\/(p|div|li|h\d|tr)>/gi, "\n")
    .replace(/<[^>]+>/g, " ")
    .replace(/&nbsp;/g, " ")
    .replace(/&amp;/g, "&")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/[ \t]+/g, " ")
    .replace(/\s*\n\s*/g, "\n")
    .trim();
}

async function readCapped(body: ReadableStream<Uint8Array>, maxBytes: number): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      const room = maxBytes - size;
      if (value.byteLength > room) {
        chunks.push(value.subarray(0, room));
        size += room;
        truncated = true;
        break;
      }
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return { bytes, truncated };
}

/** `fetch_url`: GET a public http(s) URL and return its text, capped in size and time. */
export function fetchUrlTool(limits: Partial<FetchUrlLimits> = {}): Tool {
  const lim = { ...DEFAULT_LIMITS, ...limits };
  return {
    schema: {
      type: "function",
      function: {
        name: "fetch_url",
        description: `Fetch a public web page or text document with HTTP GET and return its text (at most ${lim.maxChars} characters).`,
        parameters: {
          type: "object",
          properties: { url: { type: "string", description: "Absolute http:// or https:// URL" } },
          required: ["url"],
          additionalProperties: false,
        },
      },
    },
    async run(args, ctx) {
      if (typeof args.url !== "string") return toolError("url must be a string");
      let url: URL;
      try {
        url = new URL(args.url);
      } catch {
        return toolError("url is not a valid absolute URL");
      }
      const ctrl = new AbortController();
      const timer = setTimeout(() => ctrl.abort(new Error("timeout")), lim.timeoutMs);
      const onAbort = () => ctrl.abort(ctx.signal?.reason);
      ctx.signal?.addEventListener("abort", onAbort, { once: true });
      try {
        for (let hop = 0; ; hop++) {
          if (url.protocol !== "http:" && url.protocol !== "https:") return toolError(`only http and https URLs can be fetched, not ${url.protocol}`);
          if (isBlockedHost(url.hostname)) return toolError(`refusing to fetch a local or private address (${url.hostname})`);
          let res: Response;
          try {
            res = await ctx.fetch(url.toString(), { method: "GET", redirect: "manual", signal: ctrl.signal, headers: { accept: "text/*, application/json;q=0.9, */*;q=0.1", "user-agent": "hermes-edge fetch_url" } });
          } catch (err) {
            if (ctx.signal?.aborted) throw err;
            if (ctrl.signal.aborted) return toolError(`timed out after ${lim.timeoutMs} ms`);
            return toolError(`request failed: ${err instanceof Error ? err.message : String(err)}`);
          }
          const location = res.headers.get("location");
          if (res.status >= 300 && res.status < 400 && location) {
            await res.body?.cancel();
            if (hop >= lim.maxRedirects) return toolError(`too many redirects (more than ${lim.maxRedirects})`);
            url = new URL(location, url);
            continue;
          }
          const type = res.headers.get("content-type") ?? "";
          if (type && !TEXT_TYPES.test(type)) {
            await res.body?.cancel();
            return toolError(`not a text document (content-type ${type})`);
          }
          const { bytes, truncated } = res.body ? await readCapped(res.body, lim.maxBytes) : { bytes: new Uint8Array(), truncated: false };
          let text = new TextDecoder().decode(bytes);
          if (/html/i.test(type) || /^\s*<(!doctype html|html)/i.test(text)) text = htmlToText(text);
          const cut = text.length > lim.maxChars;
          return JSON.stringify({ url: url.toString(), status: res.status, content_type: type || null, truncated: truncated || cut, text: cut ? text.slice(0, lim.maxChars) : text });
        }
      } finally {
        clearTimeout(timer);
        ctx.signal?.removeEventListener("abort", onAbort);
      }
    },
  };
}
