import { describe, expect, it } from "vitest";
import { OFFLINE_MODEL_ID, OfflineModel, forProvider, isOfflineReply, transcriptProblem, type ChatMessage } from "../../workers/agent/index.ts";
import { generateTurn, rng } from "../support/context-fixtures.ts";

/** A real reply to the last user message of `history`, as the offline model would write it. */
async function offlineAnswer(history: ChatMessage[]): Promise<ChatMessage> {
  const r = await new OfflineModel({ delayMs: 0 }).complete({ messages: history });
  return { role: "assistant", content: r.content, finish_reason: r.finishReason, model: OFFLINE_MODEL_ID };
}

describe("forProvider", () => {
  it("never shows a real model an offline reply, keeps every user message, and yields a valid transcript (200 random sessions)", async () => {
    for (let seed = 1; seed <= 200; seed++) {
      const rand = rng(seed);
      const history: ChatMessage[] = [];
      for (let t = 0; t < 1 + Math.floor(rand() * 8); t++) {
        // Sessions switch between the offline model and a real one at random.
        if (rand() < 0.5) {
          history.push({ role: "user", content: `offline question ${t}` });
          history.push(await offlineAnswer(history));
        } else {
          history.push(...generateTurn(rand, t, { bigResultChars: 60 }).map((m) => (m.role === "assistant" ? { ...m, model: "gpt-x" } : m)));
        }
      }
      const out = forProvider(history, "gpt-x");
      expect(transcriptProblem(out), `seed ${seed}`).toBeNull();
      expect(
        out.some((m) => m.role === "assistant" && m.content?.startsWith("(offline model)")),
        `seed ${seed}`,
      ).toBe(false);
      const said = out
        .filter((m) => m.role === "user")
        .map((m) => m.content)
        .join("\n\n");
      for (const m of history.filter((h) => h.role === "user")) expect(said, `seed ${seed}`).toContain(m.content);
      expect(forProvider(history, OFFLINE_MODEL_ID).filter(isOfflineReply).length).toBe(history.filter(isOfflineReply).length);
    }
  });

  it("recognises offline replies stored before messages carried their model", () => {
    expect(isOfflineReply({ role: "assistant", content: "(offline model) You said: hi" })).toBe(true);
    expect(isOfflineReply({ role: "assistant", content: "(offline model) quoted", model: "gpt-x" })).toBe(false);
    expect(isOfflineReply({ role: "user", content: "(offline model) typed by a user" })).toBe(false);
  });
});
