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
    const { out } = await run({ url: "https://a.example/big" }, () => new Response("a".repeat(5000), { headers: { "content-type": "text/plain" } }), { maxBytes: 100 });
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
    const { out, seen } = await run({ url: "https://a.example/r" }, () => new Response(null, { status: 302, headers: { location: "http://192.168.1.1/admin" } }));
    expect(out.error).toContain("refusing");
    expect(seen).toEqual(["https://a.example/r"]);
    expect(isBlockedHost("example.com")).toBe(false);
  });

  it("rejects arguments that are not a URL", async () => {
    const { out } = await run({ url: "not a url" }, () => new Response("x"));
    expect(out.error).toContain("valid absolute URL");
  });
});
