/**
 * Scenario (g): a few hundred correctly signed hostile bodies per platform, mutations of the
 * real payloads in test/corpus (one field at a time given a wrong type or removed, by
 * `test/support/mutate.ts`), plus bodies that are not objects at all. No answer may be a
 * 5xx (platforms retry those for hours), and a signed body is never refused as unsigned.
 * Afterwards the Worker still answers an ordinary message.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { PROJECT_ROOT } from "../../cli/local.ts";
import { mutations, NOT_OBJECTS } from "../../test/support/mutate.ts";
import {
  DISCORD_TEST,
  discordHeaders,
  MATRIX_TEST,
  matrixHeaders,
  SLACK_TEST,
  slackHeaders,
  TELEGRAM_TEST,
  telegramHeaders,
  whatsappHeaders,
} from "../../test/support/signing.ts";
import type { Tally, WorkerClient } from "./harness.ts";
import type { Stack } from "./stack.ts";
import { checkChat } from "./check.ts";
import { telegramDm } from "./chats.ts";
import { freshUser, sendDm } from "./telegram-dm.ts";

type Platform = "telegram" | "discord" | "slack" | "whatsapp" | "matrix";

interface Entry {
  name: string;
  expect: string;
  bot?: Record<string, string | number>;
  payload?: Record<string, unknown>;
  form?: Record<string, string>;
}

/** The corpus of one platform, read from disk (the Vite glob in test/support/corpus.ts needs Vite). */
function corpus(platform: Platform): Entry[] {
  const dir = path.join(PROJECT_ROOT, "test", "corpus", platform);
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => ({ ...(JSON.parse(readFileSync(path.join(dir, f), "utf8")) as Omit<Entry, "name">), name: f.replace(/\.json$/, "") }));
}

/**
 * The entry as our Worker would receive it: our bot's identity instead of the recording's,
 * an allowed sender (unless the entry is about refusing one), and every URL on loopback
 * (nothing a mutation makes the Worker fetch may leave the machine).
 */
function adopt(platform: Platform, e: Entry, loopback: string): Record<string, unknown> {
  let text = JSON.stringify(e.payload ?? e.form);
  const swap = (from: string | number | undefined, to: string | number) => {
    if (from !== undefined && String(from) !== "") text = text.split(String(from)).join(String(to));
  };
  if (platform === "telegram") {
    swap(e.bot?.username, TELEGRAM_TEST.username);
    swap(e.bot?.id, TELEGRAM_TEST.botId);
  } else if (platform === "discord") swap(e.bot?.application_id, DISCORD_TEST.applicationId);
  else if (platform === "slack") swap(e.bot?.user_id, SLACK_TEST.botUserId);
  else if (platform === "matrix") swap(e.bot?.user_id, MATRIX_TEST.bot);
  // WhatsApp's corpus is addressed to the test number already (metadata.phone_number_id).
  const body = JSON.parse(text.replace(/"https?:\/\/[^"]*"/g, JSON.stringify(`${loopback}/files/x`))) as Record<string, unknown>;
  if (e.expect !== "refuse") setSender(platform, body);
  return body;
}

/** Makes the person who sent it an allowed user (leaving bots as they are). */
function setSender(platform: Platform, v: unknown): void {
  if (typeof v !== "object" || v === null) return;
  const o = v as Record<string, unknown>;
  if (platform === "telegram" && typeof o.from === "object" && o.from !== null && (o.from as Record<string, unknown>).is_bot === false)
    (o.from as Record<string, unknown>).id = 1001;
  if (platform === "discord" && typeof o.user === "object" && o.user !== null && !(o.user as Record<string, unknown>).bot)
    (o.user as Record<string, unknown>).id = "2001";
  if (platform === "slack" && typeof o.user === "string" && o.user.startsWith("U") && o.user !== SLACK_TEST.botUserId && !o.bot_id) o.user = "U1001";
  if (platform === "slack" && typeof o.user_id === "string" && typeof o.command === "string") o.user_id = "U1001";
  // A WhatsApp message's sender (`from`) and its contact (`wa_id`): both name the user.
  if (platform === "whatsapp" && typeof o.from === "string") o.from = "15550001001";
  if (platform === "whatsapp" && typeof o.wa_id === "string") o.wa_id = "15550001001";
  // A Matrix event's sender, unless it is the bot.
  if (platform === "matrix" && typeof o.sender === "string" && o.sender !== MATRIX_TEST.bot) o.sender = "@alice:example.org";
  for (const x of Object.values(o)) setSender(platform, x);
}

function encode(platform: Platform, isForm: boolean, variant: unknown): { body: string; type: string } {
  if (!isForm || typeof variant !== "object" || variant === null || Array.isArray(variant)) return { body: JSON.stringify(variant), type: "application/json" };
  const pairs = Object.entries(variant as Record<string, unknown>).map(([k, x]) => [k, typeof x === "string" ? x : JSON.stringify(x)] as [string, string]);
  return { body: new URLSearchParams(pairs).toString(), type: "application/x-www-form-urlencoded" };
}

async function headers(platform: Platform, body: string, type: string): Promise<Record<string, string>> {
  if (platform === "telegram") return telegramHeaders();
  if (platform === "discord") return discordHeaders(body);
  if (platform === "whatsapp") return whatsappHeaders(body);
  if (platform === "matrix") return matrixHeaders();
  return slackHeaders(body, undefined, undefined, type);
}

/** Statuses a signed body may get: 2xx; for Discord also 400 (an interaction it cannot read). */
const acceptable = (platform: Platform, status: number) => (status >= 200 && status < 300) || (platform === "discord" && status === 400);

export async function barrage(
  api: WorkerClient,
  tally: Tally,
  platform: Platform,
  perPlatform: number,
  loopback: string,
  seed: number,
  llmCalls: () => number,
): Promise<void> {
  const entries = corpus(platform);
  const per = Math.max(1, Math.ceil(perPlatform / entries.length));
  const bodies: Array<{ label: string; body: string; type: string }> = [];
  entries.forEach((e, i) => {
    const base = adopt(platform, e, loopback);
    for (const v of mutations(base, per, seed + i)) bodies.push({ label: e.name, ...encode(platform, e.form !== undefined, v) });
  });
  for (const raw of NOT_OBJECTS)
    bodies.push({ label: "not an object", body: raw, type: platform === "slack" && raw === "" ? "application/x-www-form-urlencoded" : "application/json" });
  let next = 0;
  const statuses = new Map<number, number>();
  const modelCalls = llmCalls();
  // A few in flight at once, as a platform's retries and bursts arrive.
  await Promise.all(
    Array.from({ length: 6 }, async () => {
      while (next < bodies.length) {
        const b = bodies[next++]!;
        tally.cases++;
        let status: number;
        try {
          // A Matrix transaction of its own for each body (a retried txnId would be answered without being read).
          const to = platform === "matrix" ? { method: "PUT", path: `/webhooks/matrix/_matrix/app/v1/transactions/chaos-${seed}-${next}` } : undefined;
          status = await api.webhook(platform, b.body, await headers(platform, b.body, b.type), to);
        } catch {
          continue; // counted as a 5xx by the client
        }
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (status < 500 && !acceptable(platform, status)) tally.add("lost", `${platform} ${b.label}: a signed body answered ${status}`);
      }
    }),
  );
  const seen = [...statuses]
    .sort((a, b) => a[0] - b[0])
    .map(([k, n]) => `${k}×${n}`)
    .join(" ");
  tally.info.push(
    `${platform}: ${bodies.length} bodies from ${entries.length} corpus payloads, answered ${seen}; ${llmCalls() - modelCalls} model calls so far`,
  );
}

/** (g) hostile bodies on each platform, then an ordinary message answered as ever. */
export async function hostileBodies(s: Stack, o: { bodies: number }, tally: Tally): Promise<void> {
  s.reset();
  const loopback = s.llmUrl;
  const calls = () => s.llm.calls.length;
  await barrage(s.api, tally, "telegram", o.bodies, loopback, 1601, calls);
  await barrage(s.api, tally, "discord", o.bodies, loopback, 1602, calls);
  await barrage(s.api, tally, "slack", o.bodies, loopback, 1603, calls);
  await barrage(s.api, tally, "whatsapp", o.bodies, loopback, 1604, calls);
  await barrage(s.api, tally, "matrix", o.bodies, loopback, 1605, calls);
  const user = freshUser();
  await sendDm(s.api, user, "still there after the hostile bodies?");
  await checkChat(
    s.api,
    telegramDm(s, user),
    tally,
    [{ text: "still there after the hostile bodies?", expected: "echo: still there after the hostile bodies?" }],
    60_000,
  );
}
