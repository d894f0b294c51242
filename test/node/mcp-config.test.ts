import { describe, expect, it } from "vitest";
import {
  TOOL_NAME,
  edgeMcpSource,
  formatCallResult,
  namespacedName,
  parseMcpServers,
  parseToolTimeout,
  redactor,
  sanitiseInputSchema,
  tokenFor,
  tokenSecretName,
} from "../../workers/agent/mcp/index.ts";

const edge = (text: string) => parseMcpServers(text, { source: "MCP_SERVERS", commands: false });

describe("MCP_SERVERS", () => {
  it("keeps good entries and says exactly what is wrong with the others", () => {
    const cfg = edge(
      JSON.stringify([
        { name: "docs", url: "https://docs.example/mcp" },
        { name: "DOCS", url: "https://other.example/mcp" },
        { name: "my-docs", url: "https://a.example/mcp" },
        { name: "my_docs", url: "https://b.example/mcp" },
        { name: "bad name", url: "https://c.example/mcp" },
        { name: "a__b", url: "https://c.example/mcp" },
        { name: "plain", url: "http://d.example/mcp" },
        { name: "local", url: "http://127.0.0.1:9000/mcp" },
        { name: "creds", url: "https://u:p@e.example/mcp" },
        { name: "proc", command: "node", args: ["server.js"] },
        { name: "both", url: "https://f.example", command: "x" },
        "nope",
      ]),
    );
    expect(cfg.servers).toEqual([
      { name: "docs", url: "https://docs.example/mcp" },
      { name: "my-docs", url: "https://a.example/mcp" },
      { name: "local", url: "http://127.0.0.1:9000/mcp" },
    ]);
    expect(cfg.problems).toEqual([
      'MCP_SERVERS entry 2: server name "DOCS" is already used by "docs" (names must differ after upper-casing)',
      'MCP_SERVERS entry 4: server name "my_docs" is already used by "my-docs" (names must differ after upper-casing)',
      'MCP_SERVERS entry 5: name must be 1-32 letters, digits, - or _ (no "__"), got "bad name"',
      'MCP_SERVERS entry 6: name must be 1-32 letters, digits, - or _ (no "__"), got "a__b"',
      "server plain: url must be https:// (plain http only for localhost)",
      "server creds: url must not carry credentials; put the token in the secret MCP_TOKEN_CREDS",
      'server proc: "command" servers run only on the gateway (hermes-edge gateway --mcp <file>)',
      'server both: give either "url" or "command"',
      "MCP_SERVERS entry 12 must be an object",
    ]);
  });

  it("reports bad JSON and a non-list in one line, and unset as nothing at all", () => {
    expect(edge("[{name: docs}]").problems).toEqual([expect.stringMatching(/^MCP_SERVERS is not valid JSON \(.+\)$/)]);
    expect(edge('{"name":"docs"}').problems).toEqual(['MCP_SERVERS must be a JSON list of servers, like [{"name":"docs","url":"https://…/mcp"}]']);
    expect(edge("  ")).toEqual({ servers: [], problems: [] });
    expect(edgeMcpSource({ MCP_SERVERS: "" })).toBeNull();
  });

  it("a bad config still gives a source whose listing carries the problems as notes", async () => {
    const src = edgeMcpSource({ MCP_SERVERS: "not json", TOOL_TIMEOUT_MS: "soon" }, { log: () => {} })!;
    expect((await src.list()).notes).toEqual([
      expect.stringMatching(/^some tools are unavailable: MCP_SERVERS is not valid JSON/),
      "some tools are unavailable: TOOL_TIMEOUT_MS must be 1-600000 milliseconds (got 'soon'); using 30000",
    ]);
  });

  it("reads each server's token from MCP_TOKEN_<NAME>, and TOOL_TIMEOUT_MS", () => {
    expect(tokenSecretName("my-docs.v2")).toBe("MCP_TOKEN_MY_DOCS_V2");
    expect(tokenFor({ MCP_TOKEN_DOCS: " t0k " }, "docs")).toBe("t0k");
    expect(tokenFor({ MCP_TOKEN_DOCS: 42 }, "docs")).toBeUndefined();
    expect(parseToolTimeout(undefined)).toEqual({ ms: 30_000 });
    expect(parseToolTimeout("1500")).toEqual({ ms: 1500 });
  });
});

describe("tool names and schemas for OpenAI", () => {
  it("namespaces names and keeps them valid, short and distinct", () => {
    expect(namespacedName("docs", "search")).toBe("docs__search");
    const odd = [
      namespacedName("docs", "files/read.v2"),
      namespacedName("docs", "files_read_v2"),
      namespacedName("docs", "x".repeat(80)),
      namespacedName("docs", "x".repeat(81)),
    ];
    for (const n of odd) expect(n).toMatch(TOOL_NAME);
    expect(new Set(odd).size).toBe(odd.length);
  });

  it("makes schemas objects with properties, without meta keys or top-level combinators", () => {
    const out = sanitiseInputSchema({
      $schema: "http://json-schema.org/draft-07/schema#",
      anyOf: [{ required: ["a"] }],
      properties: { a: { type: "array" }, b: true, c: false, d: { type: "object" }, e: { type: "string", default: 1n } },
      required: ["a", "zz", 3],
    });
    expect(out).toEqual({
      type: "object",
      properties: { a: { type: "array", items: {} }, b: {}, d: { type: "object", properties: {} }, e: { type: "string" } },
      required: ["a"],
    });
    expect(sanitiseInputSchema("nonsense")).toEqual({ type: "object", properties: {} });
    expect(
      sanitiseInputSchema({ type: "object", properties: { big: { description: "d".repeat(1000), enum: Array.from({ length: 5000 }, (_, i) => i) } } }),
    ).toEqual({ type: "object", properties: {} });
  });
});

describe("tool results", () => {
  it("joins text, describes other content, reports isError as an error, and redacts secrets", () => {
    const redact = redactor(["s3cr3t-value"]);
    const result = {
      content: [
        { type: "text", text: "line with s3cr3t-value" },
        { type: "audio", data: "AAAA", mimeType: "audio/wav" },
        { type: "resource_link", uri: "file:///a.txt", name: "a" },
        { type: "resource", resource: { uri: "file:///b.txt", text: "inline" } },
      ],
    };
    expect(formatCallResult(result, { maxChars: 1000, redact })).toBe(
      "line with [redacted]\n[audio: audio/wav, 3 bytes]\n[resource link: file:///a.txt (a)]\n[resource file:///b.txt]\ninline",
    );
    expect(formatCallResult({ content: [{ type: "text", text: "nope" }], isError: true }, { maxChars: 1000, redact })).toBe('{"error":"nope"}');
    expect(formatCallResult({ content: [], structuredContent: { n: 1 } }, { maxChars: 1000, redact })).toBe('{"n":1}');
  });
});
