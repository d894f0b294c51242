import type { Resolver } from "./resolve.ts";
import { toolError, type Tool } from "./tools.ts";
import { errorMessage } from "../log/index.ts";
import { itemAt } from "./item-at.ts";

/** Limits of {@link fetchUrlTool}. */
export interface FetchUrlLimits {
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
  maxChars: number;
}

const DEFAULT_LIMITS: FetchUrlLimits = { maxBytes: 256 * 1024, timeoutMs: 10_000, maxRedirects: 3, maxChars: 20_000 };

const TEXT_TYPES = /^(text\/|application\/(json|xml|javascript|xhtml\+xml|[\w.+-]+\+(json|xml))\b)/i;

function ipv4Blocked(a: number, b: number): boolean {
  return (
    a === 0 ||
    a === 10 ||
    a === 127 ||
    a >= 224 ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 100 && b >= 64 && b <= 127) ||
    (a === 198 && (b === 18 || b === 19)) ||
    (a === 192 && b === 0)
  );
}

/** The 16 bytes of an IPv6 literal, or null if it is not one. */
function ipv6Bytes(text: string): number[] | null {
  let h = text;
  const v4 = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(h);
  if (v4) {
    const [a, b, c, d] = v4.slice(1, 5).map(Number);
    if (a === undefined || b === undefined || c === undefined || d === undefined || [a, b, c, d].some((x) => x > 255)) return null;
    h = `${h.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [before, after, ...more] = h.split("::");
  if (before === undefined || more.length > 0) return null;
  const part = (s: string) => (s === "" ? [] : s.split(":"));
  const head = part(before);
  const tail = after === undefined ? [] : part(after);
  const fill = 8 - head.length - tail.length;
  if (fill < 0 || (after === undefined && fill !== 0)) return null;
  const groups = [...head, ...Array<string>(fill).fill("0"), ...tail];
  if (groups.some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return null;
  return groups.flatMap((g) => [parseInt(g, 16) >> 8, parseInt(g, 16) & 255]);
}

/** Suffixes of names that only ever mean something on a local network. */
const LOCAL_SUFFIXES = [".localhost", ".local", ".internal", ".lan", ".home.arpa", ".localdomain", ".intranet", ".corp", ".home", ".private"];

/** Whether `h` (lower case, no brackets or trailing dot) is an IP literal rather than a name. */
function isLiteral(h: string): boolean {
  return h.includes(":") || /^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

function normalise(hostname: string): string {
  return hostname
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/\.+$/, "");
}

/**
 * True for addresses and names the tool must never reach: loopback, private, link-local,
 * CGNAT, benchmarking and multicast IPv4; the IPv6 equivalents, IPv4 mapped or embedded in
 * IPv6 (::ffff:0:0/96, ::/96, NAT64 64:ff9b::/96); single-label names (`intranet`, the
 * machine's own short name: a resolver's search list makes them local), `localhost` and
 * local suffixes (`*.local`, `*.internal`, …), and `localNames` (the machine's own names).
 * A public-looking name that resolves to such an address is caught by the tool's resolver
 * (see FetchUrlOptions).
 */
export function isBlockedHost(hostname: string, localNames: readonly string[] = []): boolean {
  const h = normalise(hostname);
  if (h === "" || h === "localhost" || LOCAL_SUFFIXES.some((s) => h.endsWith(s))) return true;
  if (localNames.some((n) => normalise(n) === h)) return true;
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(h);
  if (v4) return ipv4Blocked(Number(v4[1]), Number(v4[2]));
  if (!h.includes(":")) return !h.includes(".") || /^[\d.]+$/.test(h); // single label, or a numeric form that is no dotted quad (2130706433, 127.1)
  const b = ipv6Bytes(h);
  if (!b) return true; // not a well-formed literal: refuse rather than guess
  const zeroTo = (n: number) => b.slice(0, n).every((x) => x === 0);
  if (zeroTo(10) && b[10] === 0xff && b[11] === 0xff) return ipv4Blocked(itemAt(b, 12), itemAt(b, 13)); // ::ffff:a.b.c.d
  if (zeroTo(12)) return true; // ::, ::1 and IPv4-compatible ::a.b.c.d
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b) return true; // NAT64
  if ((itemAt(b, 0) & 0xfe) === 0xfc) return true; // unique local fc00::/7
  if (b[0] === 0xfe && (itemAt(b, 1) & 0xc0) >= 0x80) return true; // link-local fe80::/10, site-local fec0::/10
  return b[0] === 0xff; // multicast
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

/** How the tool learns where a name points, where the runtime allows it. */
export interface FetchUrlOptions {
  /**
   * Resolves a host name to its addresses: the Node gateway passes the system resolver
   * (hosts file included); the Worker, which has no DNS API, a DNS-over-HTTPS one
   * ({@link dohResolver}). A name that does not resolve, or has any blocked address, is
   * refused, and so is every redirect's. Resolution and connection are separate steps: a
   * DNS answer that changes in between (rebinding), or a name the runtime resolves
   * otherwise than the resolver (a hosts-file entry under `wrangler dev`), is not caught.
   * Without a resolver only literal addresses and local names are refused.
   */
  resolve?: Resolver;
  /** The machine's own names (its host name), refused like `localhost`. */
  localNames?: readonly string[];
}

/** `fetch_url`: GET a public http(s) URL and return its text, capped in size and time. */
export function fetchUrlTool(limits: Partial<FetchUrlLimits> = {}, opts: FetchUrlOptions = {}): Tool {
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
      // A signal aborted before we listened fires no event: act on it now.
      if (ctx.signal?.aborted) onAbort();
      try {
        for (let hop = 0; ; hop++) {
          if (url.protocol !== "http:" && url.protocol !== "https:") return toolError(`only http and https URLs can be fetched, not ${url.protocol}`);
          if (isBlockedHost(url.hostname, opts.localNames))
            return toolError(`refusing to fetch a local or private address (${url.hostname}): only public hosts can be fetched`);
          if (opts.resolve && !isLiteral(normalise(url.hostname))) {
            const addresses = await opts.resolve(normalise(url.hostname), ctrl.signal).catch(() => null);
            if (!addresses || addresses.length === 0) return toolError(`cannot resolve ${url.hostname}`);
            const bad = addresses.find((a) => isBlockedHost(a));
            if (bad) return toolError(`refusing to fetch ${url.hostname}: it points to a local or private address (${bad})`);
          }
          let res: Response;
          try {
            res = await ctx.fetch(url.toString(), {
              method: "GET",
              redirect: "manual",
              signal: ctrl.signal,
              headers: { accept: "text/*, application/json;q=0.9, */*;q=0.1", "user-agent": "hermes-edge fetch_url" },
            });
          } catch (err) {
            if (ctx.signal?.aborted) throw err;
            if (ctrl.signal.aborted) return toolError(`timed out after ${lim.timeoutMs} ms`);
            return toolError(`request failed: ${errorMessage(err)}`);
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
          return JSON.stringify({
            url: url.toString(),
            status: res.status,
            content_type: type || null,
            truncated: truncated || cut,
            text: cut ? text.slice(0, lim.maxChars) : text,
          });
        }
      } finally {
        clearTimeout(timer);
        ctx.signal?.removeEventListener("abort", onAbort);
      }
    },
  };
}
