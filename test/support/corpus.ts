/// <reference types="vite/client" />
/**
 * The webhook corpus in test/corpus: real payloads as the platforms document them and as
 * public bot frameworks recorded them, each with its source and what the Worker must do.
 * The workerd project loads it through Vite's glob import (workerd has no file system to read);
 * the Node projects, whose modules Node loads itself (vitest.config.ts), read it from disk.
 */

/** The platform folders under test/corpus. */
export const CORPUS_PLATFORMS = ["telegram", "discord", "slack", "whatsapp", "matrix", "signal"] as const;
/** A platform folder name. */
export type CorpusPlatform = (typeof CORPUS_PLATFORMS)[number];

/** reply: a model turn answers; silence: 2xx, nothing else; answer: an immediate answer, no model turn; refuse: the sender is not allowed. */
export const CORPUS_EXPECTATIONS = ["reply", "silence", "answer", "refuse"] as const;
/** What the Worker must do with an entry. */
export type CorpusExpectation = (typeof CORPUS_EXPECTATIONS)[number];

/** One corpus file. Exactly one of `payload` (a JSON body) and `form` (a form-encoded body) is set. */
export interface CorpusEntry {
  platform: CorpusPlatform;
  /** The file name without `.json`. */
  name: string;
  source: string;
  description: string;
  expect: CorpusExpectation;
  notes?: string;
  /** The bot identity the payload assumes (Telegram id/username, Discord application_id, Slack bot user_id). */
  bot?: Record<string, string | number>;
  payload?: Record<string, unknown>;
  form?: Record<string, string>;
}

const KEYS = new Set(["source", "description", "expect", "notes", "bot", "payload", "form"]);

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const nonEmpty = (v: unknown) => typeof v === "string" && v.trim() !== "";

/** The minimal field every delivery of the platform has, so a pasted fragment is caught. */
function bodyProblems(platform: CorpusPlatform, e: Record<string, unknown>): string[] {
  const p = isRecord(e.payload) ? e.payload : null;
  const f = isRecord(e.form) ? e.form : null;
  if (platform === "telegram") return p && typeof p.update_id === "number" ? [] : ["a Telegram payload needs a numeric update_id"];
  if (platform === "discord") return p && typeof p.type === "number" ? [] : ["a Discord payload needs a numeric type"];
  if (platform === "matrix") return p && Array.isArray(p.events) ? [] : ["a Matrix transaction needs an events list"];
  if (platform === "whatsapp") return p && nonEmpty(p.object) && Array.isArray(p.entry) ? [] : ["a WhatsApp payload needs an object and an entry list"];
  if (platform === "signal") {
    const params = p && isRecord(p.params) ? p.params : p;
    const inner = params && isRecord(params.result) ? params.result : params;
    return inner && (isRecord(inner.envelope) || isRecord(params?.exception) || isRecord(params?.error))
      ? []
      : ["a Signal payload needs an envelope (or params.envelope)"];
  }
  if (f) return nonEmpty(f.command) ? [] : ["a Slack form needs a command"];
  return p && nonEmpty(p.type) ? [] : ["a Slack payload needs a type"];
}

/** What is wrong with a parsed corpus file (empty when it has the corpus shape). */
export function corpusProblems(platform: CorpusPlatform, raw: unknown): string[] {
  if (!isRecord(raw)) return ["not a JSON object"];
  const problems = Object.keys(raw)
    .filter((k) => !KEYS.has(k))
    .map((k) => `unknown key ${k}`);
  if (!nonEmpty(raw.source)) problems.push("source is missing");
  if (!nonEmpty(raw.description)) problems.push("description is missing");
  if (!(CORPUS_EXPECTATIONS as readonly unknown[]).includes(raw.expect)) problems.push(`expect is not one of ${CORPUS_EXPECTATIONS.join(", ")}`);
  if (raw.notes !== undefined && typeof raw.notes !== "string") problems.push("notes is not a string");
  if (raw.bot !== undefined && !(isRecord(raw.bot) && Object.values(raw.bot).every((v) => typeof v === "string" || typeof v === "number"))) {
    problems.push("bot is not an object of strings and numbers");
  }
  if ((raw.payload === undefined) === (raw.form === undefined)) return [...problems, "exactly one of payload and form is needed"];
  if (raw.payload !== undefined && !isRecord(raw.payload)) problems.push("payload is not an object");
  if (raw.form !== undefined && !(isRecord(raw.form) && Object.values(raw.form).every((v) => typeof v === "string"))) {
    problems.push("form is not an object of strings");
  }
  if (raw.form !== undefined && platform !== "slack") problems.push("only Slack bodies are form-encoded");
  return problems.length ? problems : bodyProblems(platform, raw);
}

/** Every corpus file's parsed JSON by its path from this folder ("../corpus/<platform>/<name>.json"), as the glob import names them. */
async function corpusFromDisk(): Promise<Record<string, unknown>> {
  const { readdirSync, readFileSync } = await import("node:fs");
  const root = new URL("../corpus/", import.meta.url);
  const files: Record<string, unknown> = {};
  for (const platform of readdirSync(root, { withFileTypes: true })) {
    if (!platform.isDirectory()) continue;
    for (const name of readdirSync(new URL(`${platform.name}/`, root))) {
      if (name.endsWith(".json")) files[`../corpus/${platform.name}/${name}`] = JSON.parse(readFileSync(new URL(`${platform.name}/${name}`, root), "utf8"));
    }
  }
  return files;
}

const files: Record<string, unknown> =
  navigator.userAgent === "Cloudflare-Workers" ? import.meta.glob<unknown>("../corpus/*/*.json", { eager: true, import: "default" }) : await corpusFromDisk();

/** Every corpus file, checked; throws naming the first file that is not corpus-shaped. */
export function loadCorpus(): CorpusEntry[] {
  return Object.entries(files)
    .map(([path, raw]) => {
      const [, platform = "", name = ""] = /corpus\/([^/]+)\/([^/]+)\.json$/.exec(path) ?? [];
      if (!(CORPUS_PLATFORMS as readonly string[]).includes(platform)) throw new Error(`${path}: not under a platform folder`);
      const problems = corpusProblems(platform as CorpusPlatform, raw);
      if (problems.length) throw new Error(`${path}: ${problems.join("; ")}`);
      return { ...(raw as Omit<CorpusEntry, "platform" | "name">), platform: platform as CorpusPlatform, name };
    })
    .sort((a, b) => `${a.platform}/${a.name}`.localeCompare(`${b.platform}/${b.name}`));
}

/** The request body and content type the platform would send for an entry. */
export function corpusBody(entry: CorpusEntry): { body: string; contentType: string } {
  if (entry.form) return { body: new URLSearchParams(entry.form).toString(), contentType: "application/x-www-form-urlencoded" };
  return { body: JSON.stringify(entry.payload), contentType: "application/json" };
}
