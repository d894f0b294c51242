import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../../workers/app.ts";
import { call, newSession, TOKEN } from "./helpers.ts";
import { llm } from "./setup.ts";

async function count(table: "sessions" | "messages"): Promise<number> {
  const row = await env.DB.prepare(`SELECT COUNT(*) AS n FROM ${table}`).first<{ n: number }>();
  return row!.n;
}

function errorCode(body: unknown): string {
  return (body as { error: { code: string } }).error.code;
}

describe("auth", () => {
  it("serves /health without a token", async () => {
    const res = await exports.default.fetch("http://edge.test/health");
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ ok: true });
  });

  it("answers 401 with the JSON error shape for a missing or wrong token", async () => {
    for (const token of [null, "wrong-token", `${TOKEN}x`]) {
      const res = await call("/v1/sessions", { token });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: { code: "unauthorized", message: expect.any(String) } });
    }
  });

  it("fails closed with 503 not_configured when API_TOKEN is unset", async () => {
    const res = await app.fetch(new Request("http://edge.test/v1/sessions", { headers: { authorization: "Bearer " } }), { ...env, API_TOKEN: "" });
    expect(res.status).toBe(503);
    expect(errorCode(await res.json())).toBe("not_configured");
  });
});

describe("sessions", () => {
  it("creates, lists newest first, and shows a session", async () => {
    const a = await newSession("first");
    const b = await newSession("second");
    const list = (await (await call("/v1/sessions")).json()) as { sessions: Array<{ id: string }> };
    const ids = list.sessions.map((s) => s.id);
    expect(ids.indexOf(b)).toBeLessThan(ids.indexOf(a));
    const shown = (await (await call(`/v1/sessions/${a}`)).json()) as { session: Record<string, unknown> };
    expect(shown.session).toMatchObject({ id: a, title: "first", source: "cli", running: false, handoff: null });
  });

  it("answers 404 for an unknown session on every session route", async () => {
    for (const [method, path] of [
      ["GET", "/v1/sessions/nope"],
      ["GET", "/v1/sessions/nope/messages"],
      ["POST", "/v1/sessions/nope/turns"],
      ["POST", "/v1/sessions/nope/interrupt"],
    ] as const) {
      const res = await call(path, { method, ...(method === "POST" ? { json: { content: "hi" } } : {}) });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(errorCode(await res.json())).toBe("not_found");
    }
  });

  it("answers 404 JSON for unknown routes", async () => {
    const res = await call("/v1/nothing-here");
    expect(res.status).toBe(404);
    expect(errorCode(await res.json())).toBe("not_found");
  });
});

describe("bad input stores nothing", () => {
  it("rejects malformed JSON, bad fields and empty turns with 400", async () => {
    const id = await newSession();
    const before = [await count("sessions"), await count("messages")];
    const cases: Array<[string, RequestInit, string]> = [
      ["/v1/sessions", { method: "POST", body: "{not json", headers: { "content-type": "application/json" } }, "invalid_json"],
      ["/v1/sessions", { method: "POST", body: JSON.stringify({ title: 42 }) }, "bad_request"],
      [`/v1/sessions/${id}/turns`, { method: "POST", body: JSON.stringify({ content: "   " }) }, "bad_request"],
      [`/v1/sessions/${id}/turns`, { method: "POST", body: JSON.stringify({}) }, "bad_request"],
      [`/v1/sessions/${id}/turns`, { method: "POST", body: "[]" }, "bad_request"],
      ["/v1/sessions?limit=0", { method: "GET" }, "bad_request"],
    ];
    for (const [path, init, code] of cases) {
      const res = await call(path, init);
      expect(res.status, `${init.method} ${path} ${String(init.body)}`).toBe(400);
      expect(errorCode(await res.json())).toBe(code);
    }
    expect([await count("sessions"), await count("messages")]).toEqual(before);
    expect(llm.calls).toHaveLength(0);
  });

  it("answers 413 for a body over 1 MiB, with or without a Content-Length", async () => {
    const id = await newSession();
    const before = await count("messages");
    const big = JSON.stringify({ content: "x".repeat(1024 * 1024 + 10) });
    const sized = await call(`/v1/sessions/${id}/turns`, { method: "POST", body: big });
    expect(sized.status).toBe(413);
    expect(errorCode(await sized.json())).toBe("payload_too_large");
    const bytes = new TextEncoder().encode(big);
    const streamed = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < bytes.length; i += 65536) c.enqueue(bytes.subarray(i, i + 65536));
        c.close();
      },
    });
    const chunked = await call(`/v1/sessions/${id}/turns`, { method: "POST", body: streamed, duplex: "half" } as RequestInit);
    expect(chunked.status).toBe(413);
    expect(await count("messages")).toBe(before);
  });
});
