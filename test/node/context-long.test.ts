import { describe, expect, it } from "vitest";
import {
  OFFLINE_MODEL_ID,
  ProviderError,
  SUMMARY_MAX_TOKENS,
  SummaryError,
  extractiveSummary,
  estimatingCounter,
  planContext,
  summarise,
  systemMessage,
  transcriptProblem,
  type ChatMessage,
  type ChatModel,
  type ContextPlan,
} from "../../workers/agent/index.ts";
import { exactTokens, generateTurn, rng } from "../support/context-fixtures.ts";

const counter = estimatingCounter();
const system = systemMessage({ now: Date.UTC(2026, 11, 1), where: { platform: "slack", chatType: "thread", handedOffFromCli: true } });

/** What a session keeps: the whole transcript, the rolling summary, how much of it is folded. */
interface Session {
  transcript: ChatMessage[];
  summary: string | null;
  folded: number;
}

type Fold = (s: Session, turns: ChatMessage[], upTo: number) => Promise<void>;

/**
 * Runs `turns` generated turns through the planner the way a session would: a request
 * before the turn's first model call and after each tool round, the fold applied when
 * asked. Checks every request and returns each one's exact token count.
 */
async function simulate(turns: number, fold: Fold, seed = 1): Promise<{ session: Session; exact: number[]; plans: ContextPlan[] }> {
  const rand = rng(seed);
  const session: Session = { transcript: [], summary: null, folded: 0 };
  const exact: number[] = [];
  const plans: ContextPlan[] = [];
  for (let t = 0; t < turns; t++) {
    // Now and then a tool returns something huge, bigger than the whole budget.
    const turn = generateTurn(rand, t, { bigResultChars: t % 97 === 96 ? 400_000 : 1_500 });
    for (let i = 0; i < turn.length; i++) {
      const m = turn[i]!;
      session.transcript.push(m);
      const next = turn[i + 1];
      // A model call happens after the user message and after the last result of a round.
      if (m.role === "assistant") continue;
      if (m.role === "tool" && next?.role === "tool") continue;
      const history = session.transcript.slice(session.folded);
      // A small budget: the same folding behaviour, a quarter of the tokenizing per request.
      const plan = planContext({ system, summary: session.summary, history, modelId: "gpt-x", counter, budget: 8_000 });
      const n = exactTokens(plan.messages);
      expect(n, `turn ${t}`).toBeLessThanOrEqual(plan.limit);
      expect(plan.tokens).toBeGreaterThanOrEqual(n);
      expect(transcriptProblem(plan.messages), `turn ${t}`).toBeNull();
      if (!plan.truncated) {
        // The newest turn (so far) is sent verbatim, as the last messages of the request.
        const current = session.transcript.slice(session.transcript.length - (i + 1));
        expect(plan.messages.slice(-current.length), `turn ${t}`).toEqual(current);
      }
      exact.push(n);
      plans.push(plan);
      if (plan.fold) await fold(session, history, plan.fold.upTo);
    }
  }
  return { session, exact, plans };
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

describe("a long session", () => {
  it("stays under the budget by the exact count, newest turns verbatim, tokens flat once the budget is reached", async () => {
    const extractive: Fold = async (s, history, upTo) => {
      s.summary = extractiveSummary(s.summary, history.slice(0, upTo), counter);
      s.folded += upTo;
    };
    // 120 turns are about 400 messages and 180 requests, 60 of them folds, one tool result
    // bigger than the whole budget: past the first fold every figure is in its steady band.
    // (650 turns took 3-5 s of a 5 s timeout here and showed nothing more; bench:long-session
    // runs thousands of turns through a real Worker.)
    const { session, exact, plans } = await simulate(120, extractive);
    expect(session.transcript.length).toBeGreaterThan(350);
    expect(plans.filter((p) => p.fold).length).toBeGreaterThan(10);
    expect(counter.count(session.summary!)).toBeLessThanOrEqual(SUMMARY_MAX_TOKENS);
    expect(plans.at(-1)!.messages[1]!.content).toMatch(/^Summary of the earlier conversation/);
    // Flat: after the first fold, requests stay in one band, and it does not drift upwards.
    const start = plans.findIndex((p) => p.fold);
    const steady = exact.slice(start + 1);
    const limit = plans[0]!.limit;
    const quarter = Math.floor(steady.length / 4);
    const [early, late] = [mean(steady.slice(0, quarter)), mean(steady.slice(-quarter))];
    expect(Math.max(...steady)).toBeLessThanOrEqual(limit);
    expect(late).toBeGreaterThan(0.3 * limit);
    expect(Math.abs(late - early)).toBeLessThan(0.15 * limit);
  });

  it("stays under the budget when every summary fails: the planner trims the oldest turns instead", async () => {
    const failing: ChatModel = {
      id: "gpt-x",
      complete: async () => {
        throw new ProviderError("provider_unavailable", "the model provider failed (HTTP 503)");
      },
    };
    let failures = 0;
    // The caller's fallback: keep the old summary, log, and let the planner leave the oldest turns out.
    const fallback: Fold = async (s, history, upTo) => {
      await summarise(failing, s.summary, history.slice(0, upTo), undefined, { counter }).then(
        (summary) => {
          s.summary = summary;
          s.folded += upTo;
        },
        (err: unknown) => {
          expect(err).toBeInstanceOf(SummaryError);
          failures++;
        },
      );
    };
    const { session, plans } = await simulate(100, fallback, 2);
    expect(failures).toBeGreaterThan(30);
    expect(session.folded).toBe(0);
    expect(session.summary).toBeNull();
    expect(plans.at(-1)!.omitted).toBeGreaterThan(session.transcript.length / 3);
  });

  it("folds an offline session with the extractive summariser through summarise()", async () => {
    const offline: Fold = async (s, history, upTo) => {
      s.summary = await summarise(
        { id: OFFLINE_MODEL_ID, complete: () => Promise.reject(new Error("never called")) },
        s.summary,
        history.slice(0, upTo),
        undefined,
        { counter },
      );
      s.folded += upTo;
    };
    const { session } = await simulate(80, offline, 3);
    expect(session.folded).toBeGreaterThan(0);
    expect(counter.count(session.summary!)).toBeLessThanOrEqual(SUMMARY_MAX_TOKENS);
  });
});
