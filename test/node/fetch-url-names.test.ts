import { describe, expect, it } from "vitest";
import { dohResolver, fetchUrlTool, isBlockedHost, type Resolver } from "../../workers/agent/index.ts";

/** A fake DNS: names to addresses (absent: no such name). */
function fakeDns(table: Record<string, string[]>): Resolver & { asked: string[] } {
  const asked: string[] = [];
  const r = Object.assign(
    async (host: string) => {
      asked.push(host);
      return table[host] ?? [];
    },
    { asked },
  );
  return r;
}

/** A fake web: each URL's response; records what was fetched. */
function fakeWeb(pages: Record<string, () => Response>): typeof fetch & { seen: string[] } {
  const seen: string[] = [];
  const f = async (input: string | URL | Request) => {
    const url = String(input);
    seen.push(url);
    const page = pages[url];
    return page ? page() : new Response("not found", { status: 404, headers: { "content-type": "text/plain" } });
  };
  return Object.assign(f as typeof fetch, { seen });
}

const text = (body: string) => () => new Response(body, { headers: { "content-type": "text/plain" } });
const redirect = (to: string) => () => new Response(null, { status: 302, headers: { location: to } });

async function run(tool: ReturnType<typeof fetchUrlTool>, url: string, f: typeof fetch): Promise<{ error?: string; text?: string }> {
  return JSON.parse(await tool.run({ url }, { fetch: f })) as { error?: string; text?: string };
}

describe("regression: fetch_url reached this machine by host name", () => {
  it("refuses single-label names, localhost, local suffixes and the machine's own names before resolving or fetching", async () => {
    const dns = fakeDns({});
    const web = fakeWeb({});
    const tool = fetchUrlTool({}, { resolve: dns, localNames: ["buildbox.example.org"] });
    for (const host of [
      "intranet",
      "buildbox",
      "localhost",
      "printer.local",
      "metadata.google.internal",
      "app.localhost",
      "nas.lan",
      "BuildBox.Example.Org.",
      "2130706433",
      "127.1",
    ]) {
      expect(isBlockedHost(host, ["buildbox.example.org"]), host).toBe(true);
      expect((await run(tool, `http://${host}:8080/`, web)).error, host).toMatch(/refusing to fetch/);
    }
    expect(dns.asked).toEqual([]);
    expect(web.seen).toEqual([]);
  });

  it("refuses a name that resolves to a loopback, private, link-local, ULA, CGNAT or mapped address (any one of its addresses)", async () => {
    const bad = {
      "loop.example": ["127.0.0.1"],
      "ten.example": ["10.1.2.3"],
      "link.example": ["169.254.169.254"],
      "ula.example": ["fd00::1"],
      "cgnat.example": ["100.64.0.1"],
      "mapped.example": ["::ffff:127.0.0.1"],
      "v6loop.example": ["::1"],
      "mixed.example": ["93.184.216.34", "192.168.1.1"],
    };
    const dns = fakeDns({ ...bad, "public.example": ["93.184.216.34", "2606:4700::1111"] });
    const web = fakeWeb({ "https://public.example/": text("hello") });
    const tool = fetchUrlTool({}, { resolve: dns });
    for (const [host, addrs] of Object.entries(bad)) {
      const out = await run(tool, `https://${host}/`, web);
      expect(out.error, host).toContain(`refusing to fetch ${host}: it points to a local or private address (${addrs.find((a) => a !== "93.184.216.34")})`);
    }
    expect((await run(tool, "https://nowhere.example/", web)).error).toBe("cannot resolve nowhere.example");
    expect((await run(tool, "https://public.example/", web)).text).toBe("hello");
    expect(web.seen).toEqual(["https://public.example/"]);
  });

  it("re-checks the name after each redirect", async () => {
    const dns = fakeDns({ "public.example": ["93.184.216.34"], "rebind.example": ["127.0.0.1"] });
    const web = fakeWeb({
      "https://public.example/a": redirect("https://public.example/b"),
      "https://public.example/b": redirect("http://rebind.example:9000/admin"),
    });
    const tool = fetchUrlTool({}, { resolve: dns });
    expect((await run(tool, "https://public.example/a", web)).error).toContain(
      "refusing to fetch rebind.example: it points to a local or private address (127.0.0.1)",
    );
    expect(web.seen).toEqual(["https://public.example/a", "https://public.example/b"]);
    expect(dns.asked).toEqual(["public.example", "public.example", "rebind.example"]);
    // A redirect to a local name is refused before any lookup.
    const web2 = fakeWeb({ "https://public.example/c": redirect("http://localhost:8787/v1/sessions") });
    expect((await run(tool, "https://public.example/c", web2)).error).toMatch(/refusing to fetch a local or private address \(localhost\)/);
  });
});

describe("the Worker's DNS-over-HTTPS resolver", () => {
  it("asks the configured endpoint for A and AAAA records and returns their addresses", async () => {
    const asked: string[] = [];
    const doh = (async (input: string | URL | Request, init?: RequestInit) => {
      const url = new URL(String(input));
      asked.push(`${url.origin}${url.pathname} ${url.searchParams.get("name")} ${url.searchParams.get("type")} ${new Headers(init?.headers).get("accept")}`);
      const name = url.searchParams.get("name");
      if (name === "gone.example") return Response.json({ Status: 3 });
      if (name === "broken.example") return Response.json({ Status: 2 });
      const answer =
        url.searchParams.get("type") === "A"
          ? [
              { type: 5, data: "alias.example." },
              { type: 1, data: "10.0.0.7" },
            ]
          : [{ type: 28, data: "2606:4700::1" }];
      return Response.json({ Status: 0, Answer: answer });
    }) as typeof fetch;
    const resolve = dohResolver("https://doh.test/dns-query", doh);
    expect(await resolve("sneaky.example")).toEqual(["10.0.0.7", "2606:4700::1"]);
    expect(asked).toEqual([
      "https://doh.test/dns-query sneaky.example A application/dns-json",
      "https://doh.test/dns-query sneaky.example AAAA application/dns-json",
    ]);
    expect(await resolve("gone.example")).toEqual([]);
    await expect(resolve("broken.example")).rejects.toThrow("status 2");
    // Through the tool: the private answer is refused; a resolver failure refuses too.
    const tool = fetchUrlTool({}, { resolve });
    const web = fakeWeb({});
    expect((await run(tool, "https://sneaky.example/", web)).error).toContain("(10.0.0.7)");
    expect((await run(tool, "https://broken.example/", web)).error).toBe("cannot resolve broken.example");
    expect(web.seen).toEqual([]);
  });
});
