import { describe, expect, it } from "vitest";
import { createModel } from "../../workers/agent/index.ts";
import { FakeAi } from "../support/fake-ai.ts";

describe("Workers AI in workerd", () => {
  it("streams a reply from the binding's event stream, and stops when aborted", async () => {
    const ai = new FakeAi().text("edge ", "reply").then({ kind: "hold", first: [{ response: "cut " }] });
    const model = createModel({ provider: "workers-ai", ai, model: "@cf/meta/llama-3.3-70b-instruct-fp8-fast" });
    const pieces: string[] = [];
    const out = await model.complete({ messages: [{ role: "user", content: "hi" }], onText: (t) => void pieces.push(t) });
    expect(out.content).toBe("edge reply");
    expect(pieces).toEqual(["edge ", "reply"]);
    const ctrl = new AbortController();
    const cut = await model.complete({ messages: [{ role: "user", content: "again" }], signal: ctrl.signal, onText: () => ctrl.abort() });
    expect(cut).toMatchObject({ content: "cut ", finishReason: "interrupted" });
    expect(ai.aborted).toBe(true);
  });
});
