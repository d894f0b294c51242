import { describe, expect, it } from "vitest";
import {
  DEFAULT_CONTEXT_TOKENS,
  MIN_CONTEXT_TOKENS,
  estimateRequestTokens,
  OFFLINE_MODEL_ID,
  SUMMARY_PREFIX,
  estimatingCounter,
  parseContextTokens,
  planContext,
  repairTranscript,
  systemMessage,
  transcriptProblem,
  type ChatMessage,
  type ContextInput,
  type RawMessage,
} from "../../workers/agent/index.ts";
import { exactTokens, generateTurn, randomText, rng } from "../support/context-fixtures.ts";

const counter = estimatingCounter();
const system = systemMessage({ now: Date.UTC(2026, 11, 1), where: { platform: "telegram", chatType: "dm" } });
const plan = (over: Partial<ContextInput> & { history: readonly ChatMessage[] }) => planContext({ system, modelId: "gpt-x", counter, ...over });

/** `n` turns of about `chars` characters each, no tools. */
function plainTurns(n: number, chars: number): ChatMessage[] {
  return Array.from({ length: n }, (_, i) => [
    { role: "user" as const, content: `Q${i} ${"lorem ipsum dolor ".repeat(chars / 36)}` },
    { role: "assistant" as const, content: `A${i} ${"sit amet consectetur ".repeat(chars / 42)}` },
  ]).flat();
}

/** Checks every plan must pass: under the limit by the exact count, valid, unchanged by the repair. */
function expectSound(p: ReturnType<typeof planContext>, history: readonly ChatMessage[]) {
  expect(p.tokens).toBeLessThanOrEqual(p.limit);
  expect(exactTokens(p.messages)).toBeLessThanOrEqual(p.tokens);
  expect(transcriptProblem(p.messages)).toBeNull();
  expect(repairTranscript(p.messages)).toEqual(p.messages);
  if (p.fold) expect(history[p.fold.upTo]?.role).toBe("user");
}

describe("context planning", () => {
  it("sends everything, summary marked after the system message, when it fits well", () => {
    const history = plainTurns(3, 200);
    const p = plan({ history, summary: "- The user is Ines." });
    expectSound(p, history);
    expect(p.messages).toEqual([system, { role: "system", content: `${SUMMARY_PREFIX}- The user is Ines.` }, ...history]);
    expect(p).toMatchObject({ fold: null, omitted: 0, truncated: false, limit: DEFAULT_CONTEXT_TOKENS - 4096 });
  });

  it("asks to fold the oldest turns past 75% of the limit, at a turn start, leaving at most half", () => {
    const budget = 8000;
    const limit = budget - 2000; // the reserve is at most a quarter of the budget
    // Just over 75% of the limit, under the limit itself.
    let n = 1;
    while (estimateRequestTokens(counter, [system, ...plainTurns(n, 1000)]) <= 0.8 * limit) n++;
    const history = plainTurns(n, 1000);
    const p = plan({ history, budget, reserve: 4096 });
    expectSound(p, history);
    expect(p.limit).toBe(limit);
    expect(p.messages).toHaveLength(history.length + 1); // still all sent: folding never blocks a turn
    expect(p.fold).not.toBeNull();
    const after = plan({ history: history.slice(p.fold!.upTo), budget, reserve: 4096, summary: "x ".repeat(590) });
    expect(after.tokens).toBeLessThanOrEqual(limit * 0.5);
    expect(after.fold).toBeNull();
    expect(plan({ history: plainTurns(Math.floor(n * 0.8), 1000), budget, reserve: 4096 }).fold, "under 75%: no fold").toBeNull();
  });

  it("shortens tool results in all but the newest turns, keeping each call with its result", () => {
    const rand = rng(1);
    const history = Array.from({ length: 8 }, (_, i) => generateTurn(rand, i, { bigResultChars: 3000 })).flat();
    const p = plan({ history });
    expectSound(p, history);
    const sent = p.messages.slice(1);
    const results = (ms: readonly ChatMessage[]) => ms.filter((m) => m.role === "tool");
    const userAt = sent.map((m, i) => (m.role === "user" ? i : -1)).filter((i) => i >= 0);
    const recent = sent.slice(userAt[userAt.length - 4]);
    expect(recent).toEqual(history.slice(history.length - recent.length)); // the last 4 turns verbatim
    const older = results(sent.slice(0, sent.length - recent.length));
    expect(older.length).toBeGreaterThan(0);
    for (const r of older) expect(r.content).toMatch(/\[… tool result shortened: 400 of \d+ characters kept\]$/);
  });

  it("drops the oldest turns when the history is over the limit, and says how many messages it left out", () => {
    const history = plainTurns(60, 1000);
    const p = plan({ history, budget: 8000 });
    expectSound(p, history);
    expect(p.omitted).toBeGreaterThan(0);
    expect(p.messages.slice(1)).toEqual(history.slice(p.omitted));
    expect(p.fold!.upTo).toBeLessThanOrEqual(p.omitted + 40);
  });

  it("cuts a newest turn too big alone: its largest tool results first, then its text, never failing", () => {
    const call = (id: string) => ({ id, type: "function" as const, function: { name: "fetch_url", arguments: `{"url":"https://docs.example/${id}"}` } });
    const big = (id: string, chars: number): ChatMessage => ({ role: "tool", tool_call_id: id, name: "fetch_url", content: randomText(rng(chars), chars / 5) });
    const toolHeavy: ChatMessage[] = [
      { role: "user", content: "Compare these three pages." },
      { role: "assistant", content: null, tool_calls: [call("a"), call("b"), call("c")] },
      big("a", 2000),
      big("b", 60_000),
      big("c", 30_000),
    ];
    const history = [...plainTurns(2, 200), ...toolHeavy];
    const p = plan({ history, budget: 8000 });
    expectSound(p, history);
    expect(p.truncated).toBe(true);
    const tail = p.messages.slice(-5);
    expect(tail.slice(0, 3)).toEqual(toolHeavy.slice(0, 3)); // user text and the small result intact
    expect(tail[3]!.content).toMatch(/shortened/);

    const pasted: ChatMessage[] = [{ role: "user", content: `Summarise this: ${randomText(rng(5), 40_000)}` }];
    const q = plan({ history: pasted, budget: MIN_CONTEXT_TOKENS, summary: "- earlier things" });
    expectSound(q, pasted);
    expect(q.messages.at(-1)!.content).toMatch(/^Summarise this: [\s\S]*\[… cut here: the rest did not fit in the model's context window\]$/);
  });

  it("keeps offline replies away from a real model but not from the offline one", () => {
    const history: ChatMessage[] = [
      { role: "user", content: "hi" },
      { role: "assistant", content: "(offline model) You said: hi", model: OFFLINE_MODEL_ID },
      { role: "user", content: "now with a real model" },
      { role: "assistant", content: "Hello!", model: "gpt-x" },
    ];
    expect(plan({ history }).messages.slice(1)).toEqual([{ role: "user", content: "hi\n\nnow with a real model" }, history[3]]);
    expect(plan({ history, modelId: OFFLINE_MODEL_ID }).messages.slice(1)).toEqual(history);
  });

  it("yields sound requests for random, even broken, transcripts at any budget (60 seeds)", () => {
    for (let seed = 1; seed <= 60; seed++) {
      const rand = rng(seed);
      const history: RawMessage[] = [];
      for (let t = 0; t < Math.floor(rand() * 30); t++) {
        const turn = generateTurn(rand, t, { bigResultChars: Math.floor(rand() * 8_000) });
        // Break some: lose a result, add an orphan, an unknown role, a second user message.
        if (rand() < 0.1) turn.splice(turn.findIndex((m) => m.role === "tool") >>> 0, 1);
        if (rand() < 0.1) history.push({ role: "tool", tool_call_id: "ghost", content: "orphan" });
        if (rand() < 0.1) history.push({ role: "function", content: "legacy" });
        if (rand() < 0.1) history.push({ role: "user", content: "and another thing" });
        history.push(...turn);
      }
      const budget = MIN_CONTEXT_TOKENS + Math.floor(rand() * 30_000);
      const p = plan({ history: history as ChatMessage[], budget, summary: rand() < 0.5 ? randomText(rand, 200) : null });
      try {
        expectSound(p, history as ChatMessage[]);
      } catch (err) {
        throw new Error(`seed ${seed}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  });

  it("reads LLM_CONTEXT_TOKENS with a default and a floor", () => {
    expect([undefined, "", "lots", "-5", "0"].map(parseContextTokens)).toEqual(Array(5).fill(DEFAULT_CONTEXT_TOKENS));
    expect(parseContextTokens("128000")).toBe(128_000);
    expect(parseContextTokens("100")).toBe(MIN_CONTEXT_TOKENS);
  });
});
