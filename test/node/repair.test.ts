import { describe, expect, it } from "vitest";
import { rng } from "../support/context-fixtures.ts";
import { MISSING_TOOL_RESULT, repairTranscript, transcriptProblem, type RawMessage } from "../../workers/agent/index.ts";

function randomTranscript(rand: () => number): RawMessage[] {
  const out: RawMessage[] = [];
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  const n = Math.floor(rand() * 14);
  let lastCalls: string[] = [];
  for (let i = 0; i < n; i++) {
    const kind = pick(["system", "user", "user", "assistant", "assistant_tools", "tool", "tool", "weird"] as const);
    if (kind === "assistant_tools") {
      lastCalls = Array.from({ length: 1 + Math.floor(rand() * 3) }, (_, k) => `c${i}_${k}`);
      out.push({
        role: "assistant",
        content: rand() < 0.5 ? null : "calling",
        tool_calls: lastCalls.map((id) => ({ id, type: "function", function: { name: "fetch_url", arguments: "{}" } })),
      });
    } else if (kind === "tool") {
      const id = rand() < 0.7 && lastCalls.length ? pick(lastCalls) : `ghost${i}`;
      out.push({ role: "tool", tool_call_id: id, content: `result ${i}` });
    } else if (kind === "weird") {
      out.push({ role: pick(["function", "developer?", ""]), content: "??" });
    } else {
      out.push({ role: kind, content: `${kind} ${i}` });
    }
  }
  return out;
}

describe("transcript repair", () => {
  it("always yields a valid transcript, and repairing twice changes nothing (1000 random transcripts)", () => {
    for (let seed = 1; seed <= 1000; seed++) {
      const input = randomTranscript(rng(seed));
      const frozen = JSON.stringify(input);
      const once = repairTranscript(input);
      expect(transcriptProblem(once), `seed ${seed}: ${frozen}`).toBeNull();
      expect(repairTranscript(once), `seed ${seed}`).toEqual(once);
      expect(JSON.stringify(input), "input is not mutated").toBe(frozen);
    }
  });

  it("drops unknown roles and orphan tool results, stubs missing results, merges user runs", () => {
    const out = repairTranscript([
      { role: "system", content: "be brief" },
      { role: "tool", tool_call_id: "nobody", content: "orphan" },
      { role: "user", content: "one" },
      { role: "function", content: "legacy" },
      { role: "user", content: "two" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "a", type: "function", function: { name: "fetch_url", arguments: "{}" } },
          { id: "b", type: "function", function: { name: "fetch_url", arguments: "{}" } },
        ],
      },
      { role: "tool", tool_call_id: "b", content: "B" },
      { role: "user", content: "three" },
    ]);
    expect(out).toEqual([
      { role: "system", content: "be brief" },
      { role: "user", content: "one\n\ntwo" },
      { role: "assistant", content: null, tool_calls: expect.any(Array) },
      { role: "tool", tool_call_id: "a", name: "fetch_url", content: MISSING_TOOL_RESULT },
      { role: "tool", tool_call_id: "b", content: "B" },
      { role: "user", content: "three" },
    ]);
  });

  it("keeps an interrupted reply and its finish reason", () => {
    const out = repairTranscript([
      { role: "user", content: "go" },
      { role: "assistant", content: "half", finish_reason: "interrupted" },
    ]);
    expect(out[1]).toEqual({ role: "assistant", content: "half", finish_reason: "interrupted" });
  });
});
