import { describe, expect, it } from "vitest";
import { fetchUrlTool, isBlockedHost } from "../../workers/agent/index.ts";

function run(args: Record<string, unknown>, fetchImpl: (req: Request) => Response | Promise<Response>, limits = {}) {
  const seen: string[] = [];
  const tool = fetchUrlTool(limits);
  const f = (async (input: string | URL | Request, init?: RequestInit) => {
    const req = new Request(input, init);
    seen.push(req.url);
    return fetchImpl(req);
  }) as typeof fetch;
  return tool.run(args, { fetch: f }).then((out) => ({ out: JSON.parse(out) as Record<string, unknown>, seen }));
}

describe("fetch_url", () => {
  it("returns the text of a page", async () => {
    const { out } = await run({ url: "https://a.example/x" }, () => new Response("plain words", { headers: { "content-type": "text/plain" } }));
    expect(out).toMatchObject({ status: 200, text: "plain words", truncated: false });
  });

  it("caps the size it reads", async () => {
    const { out } = await run({ url: "https://a.example/big" }, () => new Response("a".repeat(5000), { headers: { "content-type": "text/plain" } }), {
      maxBytes: 100,
    });
    expect(out).toMatchObject({ truncated: true });
    expect((out.text as string).length).toBe(100);
  });

  it("refuses binary content", async () => {
    const { out } = await run({ url: "https://a.example/img" }, () => new Response(new Uint8Array([1, 2]), { headers: { "content-type": "image/png" } }));
    expect(out.error).toContain("not a text document");
  });

  it("never reaches local or private addresses, directly or through a redirect", async () => {
    for (const url of ["http://127.0.0.1:8787/v1/sessions", "http://localhost/", "http://10.1.2.3/", "http://[::1]/", "file:///etc/passwd"]) {
      const { out, seen } = await run({ url }, () => new Response("secret"));
      expect(out.error, url).toMatch(/refusing|only http/);
      expect(seen, url).toEqual([]);
    }
    const { out, seen } = await run(
      { url: "https://a.example/r" },
      () => new Response(null, { status: 302, headers: { location: "http://192.168.1.1/admin" } }),
    );
    expect(out.error).toContain("refusing");
    expect(seen).toEqual(["https://a.example/r"]);
    expect(isBlockedHost("example.com")).toBe(false);
  });

  it("rejects arguments that are not a URL", async () => {
    const { out } = await run({ url: "not a url" }, () => new Response("x"));
    expect(out.error).toContain("valid absolute URL");
  });
});

describe("regression: fetch_url reached private addresses through names and IPv6 forms", () => {
  it("refuses trailing-dot names, IPv6 forms of private IPv4, NAT64, site-local", () => {
    for (const h of [
      "localhost.",
      "metadata.google.internal.",
      "[::7f00:1]",
      "[::ffff:127.0.0.1]",
      "[::ffff:7f00:1]",
      "[64:ff9b::a9fe:a9fe]",
      "[fec0::1]",
      "198.18.0.1",
      "router.lan",
    ]) {
      expect(isBlockedHost(h), h).toBe(true);
    }
    for (const h of ["example.com", "[2606:4700::1111]", "93.184.216.34"]) expect(isBlockedHost(h), h).toBe(false);
  });

  it("with a resolver (the gateway), refuses a public-looking name that points to a private address", async () => {
    const seen: string[] = [];
    const tool = fetchUrlTool({}, { resolve: async (host) => (host === "innocent.example" ? ["10.0.0.5"] : ["93.184.216.34"]) });
    const f = (async (input: string | URL | Request) => {
      seen.push(String(input));
      return new Response("ok", { headers: { "content-type": "text/plain" } });
    }) as typeof fetch;
    const refused = JSON.parse(await tool.run({ url: "http://innocent.example/admin" }, { fetch: f })) as { error: string };
    expect(refused.error).toContain("points to a local or private address (10.0.0.5)");
    const fine = JSON.parse(await tool.run({ url: "https://public.example/" }, { fetch: f })) as { text: string };
    expect(fine.text).toBe("ok");
    expect(seen).toEqual(["https://public.example/"]);
  });
});
