import { describe, expect, it } from "vitest";
import { readCatalog } from "../../workers/settings/catalog.ts";

/** One setting read through the catalog: its value and its problems' messages. */
function one(name: string, raw: string) {
  const { values, problems } = readCatalog({ [name]: raw });
  return { value: (values as Record<string, unknown>)[name], problems: problems.map((p) => p.message) };
}

describe("each setting's parser: valid values keep their meaning, a bad value is a problem that says what happens instead", () => {
  it("DAILY_TOKEN_BUDGET=10k, which used to mean unlimited without a word, is a problem; 10000 and 1e4 are 10000", () => {
    expect(one("DAILY_TOKEN_BUDGET", "10k")).toEqual({
      value: null,
      problems: ["DAILY_TOKEN_BUDGET=10k is not a positive whole number: the budget is off (unlimited); write a number such as 10000"],
    });
    expect(one("DAILY_TOKEN_BUDGET", "0").problems).toHaveLength(1);
    expect(one("DAILY_TOKEN_BUDGET", "10000")).toEqual({ value: 10000, problems: [] });
    expect(one("DAILY_TOKEN_BUDGET", " 1e4 ")).toEqual({ value: 10000, problems: [] });
    expect(one("DAILY_TOKEN_BUDGET", "")).toEqual({ value: null, problems: [] });
  });

  it("a misspelt BUSY_POLICY, which used to mean queue without a word, is a problem; queue and interrupt are themselves", () => {
    expect(one("BUSY_POLICY", "interupt")).toEqual({
      value: "queue",
      problems: ["BUSY_POLICY=interupt is not one of queue, interrupt: queue is used; write 'queue' or 'interrupt'"],
    });
    expect(one("BUSY_POLICY", "interrupt")).toEqual({ value: "interrupt", problems: [] });
    expect(one("BUSY_POLICY", "queue")).toEqual({ value: "queue", problems: [] });
    expect(one("BUSY_POLICY", "")).toEqual({ value: "queue", problems: [] });
  });

  it("whole numbers with defaults: RETENTION_DAYS, RELAY_BUFFER_LIMIT, ATTACHMENT_MAX_BYTES", () => {
    expect(one("RETENTION_DAYS", "30")).toEqual({ value: 30, problems: [] });
    expect(one("RETENTION_DAYS", "a month")).toEqual({
      value: null,
      problems: ["RETENTION_DAYS=a month is not a positive whole number: nothing is deleted; write a number such as 90"],
    });
    expect(one("RELAY_BUFFER_LIMIT", "500")).toEqual({ value: 500, problems: [] });
    expect(one("RELAY_BUFFER_LIMIT", "-1").problems).toEqual([
      "RELAY_BUFFER_LIMIT=-1 is not a positive whole number: the default 10000 is used; write a number such as 10000",
    ]);
    expect(one("ATTACHMENT_MAX_BYTES", "2048")).toEqual({ value: 2048, problems: [] });
    expect(one("ATTACHMENT_MAX_BYTES", "10MB").problems).toEqual([
      "ATTACHMENT_MAX_BYTES=10MB is not a positive whole number: the default 10485760 is used; write a number such as 10485760",
    ]);
  });

  it("LLM_CONTEXT_TOKENS: 32k is the default and said (it used to become 2048); below 2048 is raised and said", () => {
    expect(one("LLM_CONTEXT_TOKENS", "64000")).toEqual({ value: 64000, problems: [] });
    expect(one("LLM_CONTEXT_TOKENS", "")).toEqual({ value: 32000, problems: [] });
    expect(one("LLM_CONTEXT_TOKENS", "32k")).toEqual({
      value: 32000,
      problems: ["LLM_CONTEXT_TOKENS=32k is not a positive whole number: the default 32000 is used; write a number such as 32000"],
    });
    expect(one("LLM_CONTEXT_TOKENS", "1000")).toEqual({
      value: 2048,
      problems: ["LLM_CONTEXT_TOKENS=1000 is below the least allowed, 2048: 2048 is used; write 2048 or more"],
    });
  });

  it("milliseconds: OFFLINE_STREAM_DELAY_MS and TOOL_TIMEOUT_MS", () => {
    expect(one("OFFLINE_STREAM_DELAY_MS", "0")).toEqual({ value: 0, problems: [] });
    expect(one("OFFLINE_STREAM_DELAY_MS", "2.5")).toEqual({ value: 2.5, problems: [] });
    expect(one("OFFLINE_STREAM_DELAY_MS", "fast")).toEqual({
      value: undefined,
      problems: ["OFFLINE_STREAM_DELAY_MS=fast is not a number of milliseconds: the default 15 is used; write a number such as 15"],
    });
    expect(one("OFFLINE_STREAM_DELAY_MS", "-5")).toEqual({ value: 0, problems: ["OFFLINE_STREAM_DELAY_MS=-5 is negative: 0 is used; write 0 or more"] });
    expect(one("TOOL_TIMEOUT_MS", "1500")).toEqual({ value: 1500, problems: [] });
    expect(one("TOOL_TIMEOUT_MS", "soon")).toEqual({
      value: 30000,
      problems: ["TOOL_TIMEOUT_MS=soon is not a whole number of milliseconds up to 600000: 30000 is used; write a number such as 30000"],
    });
  });

  it("API roots: a URL is kept; anything else is the platform's own root, said", () => {
    expect(one("TELEGRAM_API_ROOT", "http://127.0.0.1:9000")).toEqual({ value: "http://127.0.0.1:9000", problems: [] });
    expect(one("TELEGRAM_API_ROOT", "")).toEqual({ value: "https://api.telegram.org", problems: [] });
    expect(one("TELEGRAM_API_ROOT", "api.telegram.org")).toEqual({
      value: "https://api.telegram.org",
      problems: ["TELEGRAM_API_ROOT=api.telegram.org is not an http(s) URL: the default https://api.telegram.org is used; write a full URL such as https://…"],
    });
    expect(one("DISCORD_API_BASE", "ftp://x").value).toBe("https://discord.com/api/v10");
    expect(one("SLACK_API_URL", "slack").value).toBe("https://slack.com/api/");
    // LLM_BASE_URL may carry a key: its value is never repeated.
    expect(one("LLM_BASE_URL", "llm.example/v1?key=abc")).toEqual({
      value: undefined,
      problems: [
        "LLM_BASE_URL (value not shown) is not an http(s) URL: it is ignored (the offline model answers unless LLM_PROVIDER says otherwise); write a full URL such as https://…",
      ],
    });
  });

  it("LLM_PROVIDER names a provider (any case, as before); DISCORD_PUBLIC_KEY is 64 hex characters; allow lists are comma lists", () => {
    expect(one("LLM_PROVIDER", "Workers-AI")).toEqual({ value: "Workers-AI", problems: [] });
    expect(one("LLM_PROVIDER", "gpt")).toEqual({
      value: "gpt",
      problems: [
        "LLM_PROVIDER=gpt is not one of openai, workers-ai, offline: every turn fails with provider_not_configured; write one of them, or leave it empty",
      ],
    });
    expect(one("DISCORD_PUBLIC_KEY", "a".repeat(64)).problems).toEqual([]);
    expect(one("DISCORD_PUBLIC_KEY", "abc").problems).toEqual([
      "DISCORD_PUBLIC_KEY=abc is not 64 hex characters: every Discord request is refused (401); copy the Public Key from the developer portal's General Information page",
    ]);
    expect(one("TELEGRAM_ALLOWED_USERS", "1, 2,*").problems).toEqual([]);
    expect(one("SLACK_ADMIN_USERS", "U1 U2").problems).toEqual([
      "SLACK_ADMIN_USERS=U1 U2 has an entry with a space in it ('U1 U2'), which matches nobody; separate ids with commas",
    ]);
  });

  it("MCP_SERVERS' own problems are said without repeating its value (a URL may carry a key)", () => {
    const r = readCatalog({ MCP_SERVERS: "not json" });
    expect(r.problems).toEqual([
      {
        setting: "MCP_SERVERS",
        value: null,
        message: expect.stringMatching(/^MCP_SERVERS \(value not shown\) has problems \(the good entries are used\): MCP_SERVERS is not valid JSON/),
      },
    ]);
  });

  it("a secret's problem never carries its value", () => {
    const r = readCatalog({ RELAY_SECRETS: "gw1:good-secret,only-an-id,:orphan-secret" });
    expect(r.problems).toEqual([
      {
        setting: "RELAY_SECRETS",
        value: null,
        message:
          "RELAY_SECRETS (value not shown) has 2 entries that are not gatewayId:secret and are ignored; write gatewayId:secret pairs separated by commas",
      },
    ]);
    expect(JSON.stringify(r.problems)).not.toMatch(/good-secret|orphan-secret|only-an-id"/);
  });
});
