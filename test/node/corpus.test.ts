import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CORPUS_EXPECTATIONS, CORPUS_PLATFORMS, corpusBody, corpusProblems, loadCorpus, type CorpusPlatform } from "../support/corpus.ts";

const root = path.join(import.meta.dirname, "../corpus");
const onDisk = CORPUS_PLATFORMS.flatMap((platform) =>
  readdirSync(path.join(root, platform))
    .filter((f) => f.endsWith(".json"))
    .map((f) => ({ platform, file: `${platform}/${f}` })),
);
const files = onDisk.map((f) => f.file).sort();

describe("webhook corpus", () => {
  it.each(onDisk)("$file parses and has the corpus shape", ({ platform, file }) => {
    expect(path.basename(file)).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*\.json$/);
    const raw: unknown = JSON.parse(readFileSync(path.join(root, file), "utf8"));
    expect(corpusProblems(platform, raw)).toEqual([]);
  });

  it("loads through the glob import exactly the files on disk", () => {
    expect(
      loadCorpus()
        .map((e) => `${e.platform}/${e.name}.json`)
        .sort(),
    ).toEqual(files);
  });

  it("covers every expectation each platform can have", () => {
    // Every Discord interaction must be answered: none can be met with silence.
    const possible = {
      telegram: CORPUS_EXPECTATIONS,
      slack: CORPUS_EXPECTATIONS,
      whatsapp: CORPUS_EXPECTATIONS,
      // The allow list is the intake's (test/worker/matrix.suite.ts refuses a sender not on it); the corpus has no refusal of its own.
      matrix: CORPUS_EXPECTATIONS.filter((x) => x !== "refuse"),
      signal: CORPUS_EXPECTATIONS,
      discord: CORPUS_EXPECTATIONS.filter((x) => x !== "silence"),
    };
    const corpus = loadCorpus();
    for (const platform of CORPUS_PLATFORMS) {
      expect(new Set(corpus.filter((e) => e.platform === platform).map((e) => e.expect)), platform).toEqual(new Set(possible[platform]));
    }
  });

  it("lists every file once in its README table, and nothing else", () => {
    const rows = readFileSync(path.join(root, "README.md"), "utf8")
      .split("\n")
      .map((line) => /^\| `((?:telegram|discord|slack|whatsapp|matrix|signal)\/[^`]+\.json)` \|/.exec(line)?.[1])
      .filter((f): f is string => f !== undefined);
    expect(rows.sort()).toEqual(files);
  });

  it("builds the body each platform sends: JSON, or a form for Slack slash commands", () => {
    const slash = loadCorpus().find((e) => e.form);
    expect(slash).toBeDefined();
    const { body, contentType } = corpusBody(slash!);
    expect(contentType).toBe("application/x-www-form-urlencoded");
    expect(new URLSearchParams(body).get("command")).toBe(slash!.form!.command);
  });
});

describe("corpus shape check", () => {
  const good = { source: "https://example.test/doc", description: "a private text", expect: "reply", payload: { update_id: 1, message: {} } };
  const broken: Array<[string, CorpusPlatform, unknown, string]> = [
    ["no source", "telegram", { ...good, source: " " }, "source is missing"],
    ["an unknown expectation", "telegram", { ...good, expect: "ignore" }, "expect is not one of reply, silence, answer, refuse"],
    ["both bodies", "slack", { ...good, form: { command: "/hermes" } }, "exactly one of payload and form is needed"],
    ["no body", "telegram", { source: good.source, description: good.description, expect: "reply" }, "exactly one of payload and form is needed"],
    ["a form outside Slack", "discord", { ...good, payload: undefined, form: { command: "/x" } }, "only Slack bodies are form-encoded"],
    ["a pasted message without its update", "telegram", { ...good, payload: { message: {} } }, "a Telegram payload needs a numeric update_id"],
    ["a misspelt key", "telegram", { ...good, note: "x" }, "unknown key note"],
    [
      "a non-string form value",
      "slack",
      { ...good, payload: undefined, form: { command: "/hermes", is_enterprise_install: false } },
      "form is not an object of strings",
    ],
  ];

  it("accepts a well-formed entry", () => {
    expect(corpusProblems("telegram", good)).toEqual([]);
  });

  it.each(broken)("rejects %s", (_, platform, entry, problem) => {
    expect(corpusProblems(platform, JSON.parse(JSON.stringify(entry)))).toContain(problem);
  });
});
