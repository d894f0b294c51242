import { describe, expect, it } from "vitest";
import { parseSlackBody } from "../../workers/platforms/slack/index.ts";
import { buildSessionKey } from "../../workers/platforms/session-key.ts";
import { loadCorpus, type CorpusEntry } from "../support/corpus.ts";
import { discordHeaders, slackHeaders, telegramHeaders, whatsappHeaders } from "../support/signing.ts";
import { corpusDelivery } from "./corpus-replay.ts";
import { newSession } from "./helpers.ts";
import { bind, deliver, settle } from "./platform-helpers.ts";
import { discord, llm, slack, telegram, whatsapp } from "./setup.ts";

/**
 * Every payload of test/corpus, signed and sent through the real webhook path (verify,
 * parse, Inbox, session object, model, platform API): it gets what its entry expects (a
 * reply, silence, an answer, a refusal), and its redelivery gets the same kind of HTTP
 * answer and changes nothing.
 */

async function headersFor(entry: CorpusEntry, body: string, contentType: string, retry: boolean): Promise<Record<string, string>> {
  if (entry.platform === "telegram") return telegramHeaders();
  if (entry.platform === "discord") return discordHeaders(body);
  if (entry.platform === "whatsapp") return whatsappHeaders(body);
  return {
    ...(await slackHeaders(body, undefined, undefined, contentType)),
    ...(retry ? { "x-slack-retry-num": "1", "x-slack-retry-reason": "http_timeout" } : {}),
  };
}

/** Messages the platform was asked to show (sent, edited, or posted to a response_url). */
function shown(platform: CorpusEntry["platform"]): string[] {
  if (platform === "telegram") return telegram.calls.filter((c) => /\/(sendMessage|editMessageText)$/.test(c.path)).map((c) => String(c.body.text));
  if (platform === "whatsapp") return whatsapp.sent().map((c) => String((c.body.text as { body?: unknown } | undefined)?.body ?? ""));
  if (platform === "discord") return discord.calls.filter((c) => c.method === "PATCH" || c.method === "POST").map((c) => String(c.body.content));
  return slack.calls.filter((c) => /chat\.(postMessage|update)$/.test(c.path) || c.path.startsWith("/commands/")).map((c) => String(c.body.text));
}

/** The HTTP answer, reduced to its kind: its status and, for JSON answers, their type. */
async function kindOf(res: Response): Promise<string> {
  const text = await res.text();
  if (!text) return `${res.status} empty`;
  const body = JSON.parse(text) as { type?: number; challenge?: string; response_type?: string };
  return `${res.status} ${body.type ?? (body.challenge !== undefined ? "challenge" : (body.response_type ?? "json"))}`;
}

/** Preconditions the corpus README names: a thread reply is heard only in a thread the bot is in. */
async function prepare(entry: CorpusEntry, body: string, contentType: string): Promise<void> {
  if (entry.platform !== "slack" || entry.name !== "thread-reply") return;
  const ingest = parseSlackBody(body, contentType);
  if (ingest.kind !== "event") throw new Error("the thread reply does not parse to an event");
  await bind(buildSessionKey(ingest.event.source), await newSession("corpus thread"));
}

const REFUSED = /not allowed to use this bot|did not say who sent this/;

describe("the webhook corpus, replayed through the Worker", () => {
  // Matrix and Signal have corpus replays of their own (Signal through the Relay object of the gateway that bridges it: test/worker-relay/signal-corpus.suite.ts).
  it.each(
    loadCorpus()
      .filter((e) => e.platform !== "matrix" && e.platform !== "signal")
      .map((e) => [`${e.platform}/${e.name} (${e.expect})`, e] as const),
  )("%s", async (_, entry) => {
    const { body, contentType } = corpusDelivery(entry);
    await prepare(entry, body, contentType);
    const first = await deliver(entry.platform, body, await headersFor(entry, body, contentType, false));
    const firstKind = await kindOf(first.clone());
    expect(first.status, firstKind).toBeLessThan(300);
    await settle();
    const turns = llm.calls.length;
    const said = shown(entry.platform);
    switch (entry.expect) {
      case "reply":
        expect(turns).toBe(1);
        expect(
          said.some((t) => t.startsWith("echo:")),
          said.join(" | "),
        ).toBe(true);
        break;
      case "silence":
        expect(turns).toBe(0);
        expect(said).toEqual([]);
        expect(firstKind).toBe("200 empty");
        break;
      case "answer":
        expect(turns).toBe(0);
        expect(firstKind !== "200 empty" || said.length > 0, `${firstKind}, shown: ${said.join(" | ")}`).toBe(true);
        break;
      case "refuse": {
        expect(turns).toBe(0);
        const inline = firstKind.endsWith(" 4") ? ((await first.json()) as { data: { content: string } }).data.content : "";
        expect(
          [inline, ...said].some((t) => REFUSED.test(t)),
          `${inline} | ${said.join(" | ")}`,
        ).toBe(true);
        break;
      }
    }
    // The platform sends it again: the same kind of answer, and nothing more happens.
    const again = await deliver(entry.platform, body, await headersFor(entry, body, contentType, true));
    expect(await kindOf(again)).toBe(firstKind);
    await settle();
    expect(llm.calls.length).toBe(turns);
    expect(shown(entry.platform)).toEqual(said);
  });
});
