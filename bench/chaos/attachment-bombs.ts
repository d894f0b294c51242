/**
 * Scenario j: hostile attachments through Telegram to `wrangler dev`. A PDF of 30,000 tiny
 * pages and a Flate bomb (about 50 KB inflating to 50 MB) are sent as documents while
 * `/health` is sampled every second: each sample must answer within 1 s (a miss is counted
 * as 5xx: a request the Worker did not serve), and each turn must answer with the note the
 * bounded reader gives the model (missing: counted lost).
 */
import { lastUserText } from "../../test/support/fake-llm.ts";
import type { FakeTelegram } from "../../test/support/fake-platforms.ts";
import { tg } from "../../test/support/fixtures.ts";
import { pdfFlateBomb, pdfWithPages } from "../../test/support/hostile-pdf.ts";
import { telegramHeaders } from "../../test/support/signing.ts";
import { until, type Tally } from "./harness.ts";
import type { Stack } from "./stack.ts";
import { freshUser } from "./telegram-dm.ts";

/** Samples `/health` once a second until stopped; each must answer within `limitMs`. */
function sampleHealth(url: string, tally: Tally, limitMs = 1000): { stop(): Promise<{ samples: number; slowestMs: number }> } {
  let samples = 0;
  let slowestMs = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const t0 = Date.now();
      try {
        const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(limitMs) });
        await res.arrayBuffer();
        if (!res.ok) tally.add("fiveXx", `/health answered ${res.status}`);
      } catch (err) {
        tally.add("fiveXx", `/health did not answer within ${limitMs} ms (${err instanceof Error ? err.message : String(err)})`);
      }
      const took = Date.now() - t0;
      samples++;
      slowestMs = Math.max(slowestMs, took);
      await new Promise((r) => setTimeout(r, Math.max(0, 1000 - took)));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { samples, slowestMs };
    },
  };
}

interface Case {
  name: string;
  bytes: Uint8Array;
  note: string;
}

/** Sends one PDF as a Telegram document from a fresh user; checks the model got `note` and the turn answered. */
async function sendPdf(s: Stack, c: Case, tally: Tally): Promise<void> {
  const user = freshUser();
  const fileId = `chaos-${c.name}-${user}`;
  (s.telegram.fake as FakeTelegram).serveFile(fileId, c.bytes, "application/octet-stream", `documents/${fileId}.pdf`);
  const caption = `read ${c.name} ${user}`;
  const body = tg.dm("", user, {
    caption,
    document: { file_id: fileId, file_unique_id: `u-${fileId}`, file_name: `${c.name}.pdf`, mime_type: "application/pdf", file_size: c.bytes.byteLength },
  });
  const t0 = Date.now();
  const status = await s.api.webhook("telegram", JSON.stringify(body), telegramHeaders());
  if (status !== 200) throw new Error(`Telegram webhook answered ${status}`);
  tally.cases++;
  try {
    const call = await until(180_000, `the model called with ${c.name}`, () => s.llm.calls.find((x) => lastUserText(x.body).startsWith(caption)));
    if (!lastUserText(call.body).includes(c.note)) tally.add("truncated", `${c.name}: the model was not told "${c.note}"`);
    await until(
      60_000,
      `the answer to ${c.name}`,
      () => (s.telegram.messages(user).some((m) => m.plain.startsWith(`echo: ${caption}`)) ? true : undefined),
      250,
    );
    tally.info.push(`${c.name} (${(c.bytes.byteLength / 1024).toFixed(0)} KB): answered in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  } catch (err) {
    tally.add("lost", `${c.name}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

export async function attachmentBombs(s: Stack, o: { rounds: number }, tally: Tally): Promise<void> {
  const cases: Case[] = [
    { name: "pages-30000", bytes: pdfWithPages(30_000), note: "PDF of 30,000 pages: read the first 200" },
    { name: "flate-bomb", bytes: await pdfFlateBomb(50 * 1024 * 1024), note: "a PDF whose compressed content inflates past 24 MB, so it was not read" },
  ];
  const health = sampleHealth(s.worker.url, tally);
  try {
    for (let round = 0; round < o.rounds; round++) {
      for (const c of cases) await sendPdf(s, c, tally);
    }
  } finally {
    const { samples, slowestMs } = await health.stop();
    tally.info.push(`/health: ${samples} samples, slowest ${slowestMs} ms`);
  }
}
