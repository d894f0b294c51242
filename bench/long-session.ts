/**
 * `npm run bench:long-session [-- --turns 2000 --every 100 --words 60]`: one session for
 * thousands of turns on a real `wrangler dev` and a fake provider on loopback. Per window of
 * `--every` turns it prints the tokens sent to the model per request (counted with the same
 * tokenizer the Worker uses), the time to first token, and the session object's wake time:
 * wrangler dev is killed and restarted on the same storage before each window, so the
 * window's first request wakes the object from its storage alone. The baseline, measured in
 * the same run, is what v0.1 sent: the whole transcript, every turn. After the budget is
 * reached every figure should stay flat.
 */
import { parseArgs } from "node:util";
import { estimateRequestTokens, estimatingCounter, type ChatMessage } from "../workers/agent/index.ts";
import { lastUserText } from "../test/support/fake-llm.ts";
import { startRestartableWorker } from "../test/support/wrangler-dev.ts";
import { api, main, mean, own, percentile, postTurn, startFakes, timeTurn, within } from "./lib.ts";

const { values } = parseArgs({
  options: {
    turns: { type: "string", default: "2000" },
    every: { type: "string", default: "100" },
    words: { type: "string", default: "60" },
    budget: { type: "string", default: "32000" },
  },
});
const TURNS = Number(values.turns);
const EVERY = Number(values.every);
const WORDS = Number(values.words);
const BUDGET = Number(values.budget);
for (const [name, v] of [
  ["turns", TURNS],
  ["every", EVERY],
  ["words", WORDS],
  ["budget", BUDGET],
] as const) {
  if (!Number.isInteger(v) || v <= 0) throw new Error(`--${name} must be a positive whole number`);
}

const VOCABULARY =
  "the of and to in is that for it as with was on be at by this had not are but from or have an they which one you were her all she there would their we him been has when who will more no if out so said what up its about into than them can only other new some could time these two may then do first any my now such like our over man me even most made after also did many before must through back years where much your way well down should because each just those people how too little state good very make world still own see men work long get here between both life being under never day same another know while last might us great old year off come since against go came right used take three".split(
    " ",
  );

/** A user message of about `WORDS` words, different every turn. */
function message(turn: number): string {
  const words = Array.from({ length: WORDS }, (_, i) => VOCABULARY[(turn * 7 + i * 13) % VOCABULARY.length]);
  return `Turn ${turn}: ${words.join(" ")}.`;
}

main("bench:long-session", 60 * 60_000, async () => {
  const counter = estimatingCounter();
  const fakes = await startFakes();
  const w = await within(startRestartableWorker({ ...fakes.vars, LLM_CONTEXT_TOKENS: String(BUDGET) }), 90_000, "starting wrangler dev");
  own({ stop: () => w.stop(), kill: () => w.kill(), output: () => w.output() });
  const id = (await api<{ session: { id: string } }>(w, "POST", "/v1/sessions", { title: "long session" })).session.id;

  console.log(
    `bench:long-session: ${TURNS} turns of ~${WORDS} words (the fake model echoes each), LLM_CONTEXT_TOKENS=${BUDGET}; wrangler dev restarted every ${EVERY} turns`,
  );
  console.log("");
  console.log(
    "   turns | tokens sent / request (mean, max) | whole transcript (v0.1 sent it all) | sent / whole | ttft p50 (warm) | wake (GET, cold) | first ttft after wake",
  );
  console.log(
    "---------+----------------------------------+---------------------------------------+--------------+-----------------+------------------+----------------------",
  );

  // What v0.1 would have sent: every message of the transcript, each turn.
  const transcript: ChatMessage[] = [];
  let firstFolded: number | null = null;
  const windows: Array<{ sent: number; ttft: number; wake: number; coldTtft: number }> = [];
  for (let start = 1; start <= TURNS; start += EVERY) {
    let wake = NaN;
    if (start > 1) {
      await w.crash();
      await within(w.restart(), 90_000, "restarting wrangler dev");
      // The first request after the restart wakes the session's object from its storage.
      const t0 = performance.now();
      await api(w, "GET", `/v1/sessions/${id}`);
      wake = performance.now() - t0;
    }
    const sent: number[] = [];
    const ttfts: number[] = [];
    let whole = 0;
    for (let turn = start; turn < start + EVERY && turn <= TURNS; turn++) {
      const content = message(turn);
      fakes.llm.calls.length = 0;
      const { ttft } = await timeTurn(
        () => postTurn(w, id, content),
        (event) => event === "delta",
      );
      // The turn's own request (a fold's summary request, if any, asks about older text).
      const call = fakes.llm.calls.find((c) => lastUserText(c.body) === content);
      if (!call) throw new Error(`turn ${turn}: the model was not asked about it`);
      const messages = call.body.messages as ChatMessage[];
      sent.push(estimateRequestTokens(counter, messages));
      if (
        firstFolded === null &&
        messages.some((m) => m.role === "system" && typeof m.content === "string" && m.content.startsWith("Summary of the earlier conversation"))
      )
        firstFolded = turn;
      transcript.push({ role: "user", content }, { role: "assistant", content: `echo: ${content}` });
      ttfts.push(ttft);
      if (turn === Math.min(start + EVERY - 1, TURNS)) whole = estimateRequestTokens(counter, [messages[0]!, ...transcript]);
    }
    const coldTtft = start > 1 ? ttfts[0]! : NaN;
    const warm = start > 1 ? ttfts.slice(1) : ttfts;
    const row = { sent: mean(sent), ttft: percentile(warm, 50), wake, coldTtft };
    windows.push(row);
    const end = Math.min(start + EVERY - 1, TURNS);
    const f = (x: number, unit = "ms") => (Number.isNaN(x) ? "–" : `${x.toFixed(1)} ${unit}`);
    console.log(
      `${String(end).padStart(8)} | ${`${Math.round(row.sent)}, ${Math.max(...sent)}`.padStart(32)} | ${String(whole).padStart(37)} | ${`${((row.sent / whole) * 100).toFixed(0)}%`.padStart(12)} | ${f(row.ttft).padStart(15)} | ${f(wake).padStart(16)} | ${f(coldTtft).padStart(20)}`,
    );
  }

  console.log("");
  if (firstFolded === null) {
    console.log(`the budget was never reached in ${TURNS} turns (raise --turns or lower --budget)`);
    return;
  }
  // Flat: the last window against the first window that was wholly past the first fold.
  const past = windows.findIndex((_, i) => (i + 1) * EVERY > firstFolded! + EVERY);
  const base = windows[past]!;
  const last = windows.at(-1)!;
  console.log(`first request with a summary: turn ${firstFolded}`);
  console.log(
    `last window vs the first one past it: tokens sent ${(last.sent / base.sent).toFixed(2)}x, ttft p50 ${(last.ttft / base.ttft).toFixed(2)}x, wake ${Number.isNaN(base.wake) ? "–" : `${(last.wake / base.wake).toFixed(2)}x`}, first ttft after wake ${Number.isNaN(base.coldTtft) ? "–" : `${(last.coldTtft / base.coldTtft).toFixed(2)}x`}`,
  );
  console.log(
    `tokens sent in the last window: ${((last.sent / estimateRequestTokens(counter, transcript)) * 100).toFixed(1)}% of the whole transcript's ${estimateRequestTokens(counter, transcript)}`,
  );
});
