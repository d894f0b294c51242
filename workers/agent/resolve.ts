/** Resolves a host name to its IPv4 and IPv6 addresses (an empty list: no such name). */
export type Resolver = (hostname: string, signal?: AbortSignal) => Promise<string[]>;

/** Where the Worker asks by default (`FETCH_URL_DOH_URL` overrides): Cloudflare's DNS-over-HTTPS JSON API. */
export const DEFAULT_DOH_URL = "https://cloudflare-dns.com/dns-query";

/** The fields of a DoH JSON answer used here, checked by hand (the agent core imports no libraries). */
function dohAnswer(body: unknown): { Status: number; Answer: Array<{ type: number; data: string }> } {
  const b = body as { Status?: unknown; Answer?: unknown } | null;
  if (typeof b !== "object" || b === null || typeof b.Status !== "number") throw new Error("DNS-over-HTTPS answered something that is not a DNS answer");
  const answers = Array.isArray(b.Answer) ? b.Answer : [];
  return {
    Status: b.Status,
    Answer: answers.filter(
      (a): a is { type: number; data: string } => typeof a === "object" && a !== null && typeof a.type === "number" && typeof a.data === "string",
    ),
  };
}

/** DNS record types: A and AAAA. */
const A = 1;
const AAAA = 28;

/**
 * A resolver over DNS-over-HTTPS (the JSON form, `?name=…&type=A|AAAA`), for the Workers
 * runtime, which has no DNS API. Asks for A and AAAA records and returns every address in
 * the answers (CNAME chains are followed by the DoH server; their names are skipped). Any
 * failure throws: the caller refuses a name it could not resolve.
 */
export function dohResolver(endpoint: string = DEFAULT_DOH_URL, fetchImpl: typeof fetch = (input, init) => fetch(input, init)): Resolver {
  return async (hostname, signal) => {
    const ask = async (type: number): Promise<string[]> => {
      const url = new URL(endpoint);
      url.searchParams.set("name", hostname);
      url.searchParams.set("type", type === A ? "A" : "AAAA");
      const res = await fetchImpl(url.toString(), { headers: { accept: "application/dns-json" }, ...(signal ? { signal } : {}) });
      if (!res.ok) throw new Error(`DNS-over-HTTPS answered ${res.status}`);
      const body = dohAnswer(await res.json());
      // 3: NXDOMAIN (no such name): no addresses. Any other error: unknown, so refused.
      if (body.Status === 3) return [];
      if (body.Status !== 0) throw new Error(`DNS-over-HTTPS status ${body.Status}`);
      return body.Answer.filter((a) => a.type === type).map((a) => a.data.trim());
    };
    const [v4, v6] = await Promise.all([ask(A), ask(AAAA)]);
    return [...v4, ...v6];
  };
}
