/**
 * bench/webhook-ack: signed deliveries per platform, 50 in flight, against `wrangler dev`.
 * For each platform: p50/p99 time to the 2xx, p50/p99 time until the reply reaches the
 * (loopback) platform API, and a check that every delivery got exactly one reply.
 * Each delivery comes from its own chat, so replies are not queued behind each other.
 * Run: npm run bench:webhooks [-- --count 1000 --concurrency 50]
 */
import { parseArgs } from "node:util";
import { FakeDiscord, FakeSlack, FakeTelegram, type ApiCall } from "../test/support/fake-platforms.ts";
import { dc, sl, tg } from "../test/support/fixtures.ts";
import { serve } from "../test/support/http.ts";
import { DISCORD_TEST, DISCORD_TEST_PUBLIC_KEY, SLACK_TEST, TELEGRAM_TEST, discordHeaders, slackHeaders, telegramHeaders } from "../test/support/signing.ts";
import { startWorker } from "../test/support/wrangler-dev.ts";
import { percentile, summary } from "./stats.ts";

const { values } = parseArgs({ options: { count: { type: "string", default: "1000" }, concurrency: { type: "string", default: "50" } } });
const COUNT = Number(values.count);
const CONCURRENCY = Number(values.concurrency);

const telegram = new FakeTelegram();
const discord = new FakeDiscord();
const slack = new FakeSlack();
const servers = await Promise.all([telegram, discord, slack].map((f) => serve((r) => f.handle(r))));
const [t, d, s] = servers.map((x) => x.url);
const worker = await startWorker({
  OFFLINE_STREAM_DELAY_MS: "0",
  TELEGRAM_BOT_TOKEN: TELEGRAM_TEST.token,
  TELEGRAM_WEBHOOK_SECRET: TELEGRAM_TEST.secret,
  TELEGRAM_ALLOWED_USERS: "*",
  TELEGRAM_API_ROOT: t!,
  DISCORD_APPLICATION_ID: DISCORD_TEST.applicationId,
  DISCORD_PUBLIC_KEY: DISCORD_TEST_PUBLIC_KEY,
  DISCORD_BOT_TOKEN: DISCORD_TEST.botToken,
  DISCORD_ALLOWED_USERS: "*",
  DISCORD_API_BASE: `${d}/api/v10`,
  SLACK_BOT_TOKEN: SLACK_TEST.token,
  SLACK_SIGNING_SECRET: SLACK_TEST.secret,
  SLACK_ALLOWED_USERS: "*",
  SLACK_API_URL: `${s}/api/`,
});

interface Delivery {
  body: string;
  headers: Record<string, string>;
  /** Matches the reply to this delivery at the fake platform API. */
  isReply: (c: ApiCall) => boolean;
}

interface Platform {
  name: string;
  fake: FakeTelegram | FakeDiscord | FakeSlack;
  make(i: number): Promise<Delivery>;
}

const platforms: Platform[] = [
  {
    name: "telegram",
    fake: telegram,
    async make(i) {
      const chat = 500000 + i;
      return { body: JSON.stringify(tg.dm(`bench ${i}`, chat)), headers: telegramHeaders(), isReply: (c) => c.path.endsWith("/sendMessage") && Number(c.body.chat_id) === chat };
    },
  },
  {
    name: "discord",
    fake: discord,
    async make(i) {
      const interaction = dc.command("ask", { prompt: `bench ${i}` }, { userId: String(800000 + i), channelId: String(900000 + i) });
      const body = JSON.stringify(interaction);
      return { body, headers: await discordHeaders(body), isReply: (c) => c.method === "PATCH" && c.path.includes(`/${interaction.token}/messages/@original`) };
    },
  },
  {
    name: "slack",
    fake: slack,
    async make(i) {
      const channel = `D${700000 + i}`;
      const body = JSON.stringify(sl.dm(`bench ${i}`, `U${700000 + i}`, channel));
      return { body, headers: await slackHeaders(body), isReply: (c) => c.path.endsWith("/chat.postMessage") && c.body.channel === channel };
    },
  },
];

async function pool<T>(items: T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < items.length) await fn(items[next++]!);
  }));
}

try {
  console.log(`bench/webhook-ack: ${COUNT} signed deliveries per platform, ${CONCURRENCY} in flight, wrangler dev on loopback, offline model`);
  // The floor: the same load of a do-nothing request (GET /health) through the same dev server.
  const floor: number[] = [];
  await pool(Array.from({ length: COUNT }), CONCURRENCY, async () => {
    const start = performance.now();
    await (await fetch(`${worker.url}/health`)).arrayBuffer();
    floor.push(performance.now() - start);
  });
  console.log(summary("floor: GET /health, same load", floor));
  for (const p of platforms) {
    const deliveries = await Promise.all(Array.from({ length: COUNT }, (_, i) => p.make(i)));
    const ack: number[] = [];
    const replyAt: Array<Promise<number>> = [];
    let failed = 0;
    const t0 = performance.now();
    await pool(deliveries, CONCURRENCY, async (dl) => {
      const start = performance.now();
      const reply = p.fake.waitFor(dl.isReply).then(() => performance.now() - start);
      const res = await fetch(`${worker.url}/webhooks/${p.name}`, { method: "POST", headers: dl.headers, body: dl.body });
      await res.arrayBuffer();
      ack.push(performance.now() - start);
      if (res.status !== 200) failed++;
      else replyAt.push(reply);
    });
    const acked = performance.now() - t0;
    const timeout = new Promise<"timeout">((r) => setTimeout(() => r("timeout"), 60_000));
    const replies = await Promise.race([Promise.all(replyAt), timeout]);
    const replyTimes = replies === "timeout" ? [] : replies;
    const perChat = deliveries.map((dl) => p.fake.calls.filter(dl.isReply).length);
    const lost = perChat.filter((n) => n === 0).length;
    const twice = perChat.filter((n) => n > 1).length;
    console.log(`\n${p.name}: ${COUNT} deliveries acknowledged in ${(acked / 1000).toFixed(2)} s (${(COUNT / (acked / 1000)).toFixed(0)}/s), non-200: ${failed}`);
    console.log(summary(`${p.name} time to 2xx`, ack));
    if (replyTimes.length) console.log(summary(`${p.name} time to reply at the API`, replyTimes));
    else console.log(`${p.name}: replies did not all arrive within 60 s`);
    console.log(`${p.name}: lost ${lost}, answered twice ${twice}; p99 ack ${percentile(ack, 99).toFixed(2)} ms (target < 50 ms)`);
  }
} finally {
  await worker.stop();
  await Promise.all(servers.map((x) => x.close()));
}
