import { describe, expect, it } from "vitest";
import { normaliseRelayUrl } from "../../cli/gateway/url.ts";

describe("relay URL normalisation", () => {
  it("maps http(s) to ws(s), appends /relay once, and refuses other schemes", () => {
    const table: Array<[string, string | null]> = [
      ["https://edge.example.com", "wss://edge.example.com/relay"],
      ["https://edge.example.com/", "wss://edge.example.com/relay"],
      ["http://127.0.0.1:8787", "ws://127.0.0.1:8787/relay"],
      ["wss://edge.example.com/relay", "wss://edge.example.com/relay"],
      ["ws://edge.example.com/relay//", "ws://edge.example.com/relay"],
      ["https://edge.example.com/base/", "wss://edge.example.com/base/relay"],
      ["https://edge.example.com/relayish", "wss://edge.example.com/relayish/relay"],
      ["  HTTPS://Edge.Example.com:8443/x?y=1  ", "wss://edge.example.com:8443/x/relay?y=1"],
      ["ftp://edge.example.com", null],
      ["edge.example.com", null],
    ];
    const got = table.map(([input]) => {
      const r = normaliseRelayUrl(input);
      return [input, r.ok ? r.url : null];
    });
    expect(got).toEqual(table);
  });
});
