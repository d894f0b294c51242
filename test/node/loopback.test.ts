import { describe, expect, it } from "vitest";
import { isLoopbackHost, isLoopbackUrl } from "../../workers/agent/loopback.ts";

describe("the one loopback check", () => {
  it("accepts localhost, names under it, 127.0.0.0/8, ::1 and IPv4-mapped 127.x, bare or as URL.hostname writes them", () => {
    const hosts = ["localhost", "LOCALHOST", "localhost.", "app.localhost", "127.0.0.1", "127.1.2.3", "127.255.255.255", "::1", "[::1]"];
    for (const host of hosts) expect(isLoopbackHost(host), host).toBe(true);
    const urls = ["http://127.0.0.1:8787", "http://localhost:8787/x", "http://[::1]:8787", "http://[::ffff:127.0.0.1]/", "http://127.1/", "http://0x7f000001/"];
    for (const url of [...urls, "http://dev.localhost/"]) expect(isLoopbackUrl(url), url).toBe(true);
  });

  it("regression: status took any host starting with 127. for this machine (127.example.com)", () => {
    const hosts = ["127.example.com", "127.0.0.1.nip.io", "127.0.0.256", "localhost.example.com", "notlocalhost", "128.0.0.1", "10.0.0.1"];
    for (const host of [...hosts, "[::2]", "::", "0.0.0.0", "[::ffff:10.0.0.1]"]) expect(isLoopbackHost(host), host).toBe(false);
    const urls = ["https://127.example.com/", "https://example.com", "http://[::ffff:a00:1]/", "not a url", ""];
    for (const url of urls) expect(isLoopbackUrl(url), url).toBe(false);
  });
});
