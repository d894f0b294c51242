import { afterAll, afterEach, expect } from "vitest";
import { removeTempDirs } from "../support/temp.ts";

/**
 * Node tests may only talk to loopback servers they started. Any other fetch fails the
 * request and, through this check, the test.
 */
const violations: string[] = [];
const realFetch = globalThis.fetch;

function isLoopback(url: URL): boolean {
  return url.hostname === "127.0.0.1" || url.hostname === "localhost" || url.hostname === "[::1]";
}

globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
  const url = new URL(input instanceof Request ? input.url : String(input));
  if (!isLoopback(url)) {
    violations.push(`${init?.method ?? "GET"} ${url.href}`);
    throw new TypeError(`fetch failed: outbound request to ${url.origin} in a test (only loopback fakes are allowed)`);
  }
  return realFetch(input, init);
}) as typeof fetch;

afterEach(() => {
  const seen = violations.splice(0);
  expect(seen, "outbound requests to non-loopback hosts").toEqual([]);
});

// Temporary directories a file's tests made with tempDir() (CLI homes, gateway databases,
// exports, the packed CLI's prefix) go with the file.
afterAll(() => removeTempDirs());
