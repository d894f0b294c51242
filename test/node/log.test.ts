import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { PROJECT_ROOT } from "../../cli/local.ts";
import { createLogger, errorChain, errorMessage, formatLine, logLines, REDACTED, redactText, textSink, type LogRecord } from "../../workers/log/index.ts";

const TG_TOKEN = "123456789:AAHfakeTelegramTokenForTests_abcdefghij";
const SLACK_TOKEN = "xoxb-1111-2222-fakeSlackToken";
const API_KEY = "sk-fakeOpenAiKeyForTests1234567890";

/** A logger whose lines land in a list. */
function recording(level?: "debug" | "info" | "warn" | "error") {
  const records: LogRecord[] = [];
  return { records, logger: createLogger({ sink: (r) => void records.push(r), level }) };
}

class PlatformDown extends Error {
  override name = "PlatformDown";
  readonly status: number;
  constructor(message: string, status: number, options?: ErrorOptions) {
    super(message, options);
    this.status = status;
  }
}

describe("the logger", () => {
  afterEach(() => vi.restoreAllMocks());

  it("prefixes each line with its component path, and writes fields as key=value", () => {
    const { records, logger } = recording();
    logger.child("inbox").child("telegram:42").info("handing on", { delivery: "d-1", attempt: 2, note: "two words" });
    const fields = { delivery: "d-1", attempt: 2, note: "two words" };
    expect(records).toEqual([{ level: "info", prefix: "inbox:telegram:42", message: "handing on", fields }]);
    expect(formatLine(records[0]!)).toBe('[inbox:telegram:42] handing on delivery=d-1 attempt=2 note="two words"');
    expect(formatLine({ level: "info", prefix: "", message: "plain", fields: {} })).toBe("plain");
  });

  it("keeps the error itself, stack and cause, and the console prints it as its own argument", () => {
    const root = new TypeError("connect ECONNREFUSED 127.0.0.1:9");
    const err = new PlatformDown("Telegram unreachable", 502, { cause: root });
    const { records, logger } = recording();
    logger.child("relay").error("fetching attachments failed; retrying", { err });
    expect(records[0]!.err).toBe(err); // the same object: nothing to redact, nothing copied
    expect(records[0]!.fields).toEqual({});

    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    createLogger().child("relay").error("fetching attachments failed; retrying", { err });
    expect(error).toHaveBeenCalledWith("[relay] fetching attachments failed; retrying", err);
    const printed = error.mock.calls[0]![1] as PlatformDown;
    expect(printed.stack).toContain("Telegram unreachable");
    expect(printed.cause).toBe(root);
  });

  it("sends each level to its console method (info to console.log, as the lines it replaced) and drops lines below its level", () => {
    const spies = { debug: vi.spyOn(console, "debug"), log: vi.spyOn(console, "log"), warn: vi.spyOn(console, "warn"), error: vi.spyOn(console, "error") };
    for (const s of Object.values(spies)) s.mockImplementation(() => {});
    const logger = createLogger({ prefix: "x" });
    logger.debug("d");
    logger.info("i");
    logger.warn("w");
    logger.error("e");
    expect([spies.debug, spies.log, spies.warn, spies.error].map((s) => s.mock.calls)).toEqual([[["[x] d"]], [["[x] i"]], [["[x] w"]], [["[x] e"]]]);

    const { records, logger: quiet } = recording("warn");
    quiet.debug("no");
    quiet.info("no");
    quiet.warn("yes");
    quiet.error("yes");
    expect(records.map((r) => r.level)).toEqual(["warn", "error"]);
  });

  it("never lets a secret reach the sink: token-shaped text, secret-named fields, and errors (copied, stack and cause kept)", () => {
    const { records, logger } = recording();
    const url = `https://api.telegram.org/bot${TG_TOKEN}/sendMessage?chat_id=1`;
    const cause = new Error(`request to ${url} failed`);
    const err = new PlatformDown(`POST ${url}: 502 with Authorization: Bearer ${API_KEY}`, 502, { cause });
    logger.child(`relay ${SLACK_TOKEN}`).error(`calling ${url}`, {
      err,
      authorization: `Bot ${TG_TOKEN}`,
      headers: { Authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
      apiKey: "anything",
      url: `https://mcp.example/sse?access_token=abc123&x=1`,
      dsn: "https://user:hunter2@db.example/x",
      input_tokens: 12,
    });
    const r = records[0]!;
    const shown = JSON.stringify({ ...r, err: undefined }) + String((r.err as Error).stack) + String(((r.err as Error).cause as Error).stack);
    for (const secret of [TG_TOKEN, SLACK_TOKEN, API_KEY, "abc123", "hunter2", "anything"]) expect(shown).not.toContain(secret);
    expect(r.message).toBe(`calling https://api.telegram.org/bot${REDACTED}/sendMessage?chat_id=1`);
    expect(r.fields).toEqual({
      authorization: REDACTED,
      headers: { Authorization: REDACTED, "content-type": "application/json" },
      apiKey: REDACTED,
      url: `https://mcp.example/sse?access_token=${REDACTED}&x=1`,
      dsn: `https://${REDACTED}@db.example/x`,
      input_tokens: 12, // a count, not a secret
    });
    const copy = r.err as PlatformDown;
    expect(copy).not.toBe(err);
    expect(copy).toBeInstanceOf(PlatformDown);
    const said = `POST https://api.telegram.org/bot${REDACTED}/sendMessage?chat_id=1: 502 with Authorization: Bearer ${REDACTED}`;
    expect([copy.name, copy.status, copy.message]).toEqual(["PlatformDown", 502, said]);
    expect(copy.stack).toContain("log.test.ts"); // the stack is still there, redacted
    expect((copy.cause as Error).message).toBe(`request to https://api.telegram.org/bot${REDACTED}/sendMessage?chat_id=1 failed`);
    expect(err.message).toContain(TG_TOKEN); // the thrown error itself is left alone
  });

  it("redacts the token shapes of every platform and provider", () => {
    expect(redactText(`token ${TG_TOKEN} here`)).toBe(`token ${REDACTED} here`);
    expect(redactText(`Slack said no to ${SLACK_TOKEN}`)).toBe(`Slack said no to ${REDACTED}`);
    expect(redactText(`key ${API_KEY}`)).toBe(`key ${REDACTED}`);
    expect(redactText('{"authorization":"Bot abc.def.ghi"}')).toBe(`{"authorization":"Bot ${REDACTED}"}`);
    expect(redactText("authorization: s3cr3tvalue")).toBe(`authorization: ${REDACTED}`);
    const path = "PATCH /webhooks/1234/aW50ZXJhY3Rpb246dG9rZW46MTIzNDU2Nzg5MA/messages/@original";
    expect(redactText(path)).toBe(`PATCH /webhooks/1234/${REDACTED}/messages/@original`);
    const plain = "the reply of turn 7 could not be delivered (network: fetch failed); authorization failed";
    expect(redactText(plain)).toBe(plain);
  });

  it("writes plain text for the gateway's stderr: the error's message and its causes, redacted, no stack", () => {
    const lines: string[] = [];
    const logger = createLogger({ sink: textSink((l) => void lines.push(l)) });
    const err = new TypeError("fetch failed", { cause: new Error(`connect ECONNREFUSED for bot${TG_TOKEN}`) });
    logger.child("gateway").warn("budget notice not delivered", { err });
    expect(lines).toEqual([`[gateway] budget notice not delivered (fetch failed (cause: connect ECONNREFUSED for bot${REDACTED}))`]);
    expect(errorChain("plain")).toBe("plain");
  });

  it("gives hosts a log(line, err?) callback: info alone, a warning with the error", () => {
    const { records, logger } = recording();
    const log = logLines(logger.child("session s1"));
    const err = new Error("boom");
    log("turn t1 started");
    log("turn t1 failed", err);
    expect(records.map((r) => [r.level, r.prefix, r.message, r.err])).toEqual([
      ["info", "session s1", "turn t1 started", undefined],
      ["warn", "session s1", "turn t1 failed", err],
    ]);
  });

  it("errorMessage gives the text of anything thrown", () => {
    expect(errorMessage(new Error("no"))).toBe("no");
    expect(errorMessage("a string")).toBe("a string");
    expect(errorMessage(42)).toBe("42");
  });
});

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return name === "node_modules" || p.endsWith(path.join("console", "assets")) ? [] : sources(p);
    return /\.ts$/.test(name) ? [p] : [];
  });
}

describe("one way to turn an error into text", () => {
  const files = ["workers", "durable-objects", "cli"].flatMap((d) => sources(path.join(PROJECT_ROOT, d)));

  it("has no inline `err instanceof Error ? err.message : String(err)` outside errorMessage (logs pass the error, messages call the helper)", () => {
    const inline = /instanceof\s+Error\s*\?\s*[\w$.#]+\.message\s*:\s*String\(/;
    const bad = files.flatMap((f) => {
      const rel = path.relative(PROJECT_ROOT, f);
      if (rel === path.join("workers", "log", "error.ts")) return [];
      return readFileSync(f, "utf8")
        .split("\n")
        .flatMap((line, i) => (inline.test(line) ? [`${rel}:${i + 1}: ${line.trim()}`] : []));
    });
    expect(files.length).toBeGreaterThan(100);
    expect(inline.test("x = err instanceof Error ? err.message : String(err);")).toBe(true);
    expect(bad).toEqual([]);
  });

  it("keeps workers/log/ import-free, so every layer (the browser console too) may use it", () => {
    const log = files.filter((f) => path.relative(PROJECT_ROOT, f).startsWith(path.join("workers", "log") + path.sep));
    expect(log.length).toBeGreaterThan(0);
    const specs = (f: string) => [...readFileSync(f, "utf8").matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)].map((m) => m[1]!);
    const bad = log.flatMap((f) => specs(f).filter((s) => !s.startsWith("./")));
    expect(bad).toEqual([]);
  });
});
