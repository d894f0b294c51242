import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { ApiClient, CliError } from "../../cli/client.ts";
import { runHandoff } from "../../cli/handoff.ts";
import { styleFor } from "../../cli/io.ts";
import type { Session } from "../../cli/api-types.ts";
import { memoryIo } from "../support/cli-io.ts";

const SET_AT = Date.UTC(2026, 11, 1, 8);

/** A Worker answering the three calls a handoff makes, in memory; `calls` is what was asked, in order. */
function fakeWorker(home: Record<string, unknown>) {
  const calls: string[] = [];
  const fetchImpl = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(String(input));
    calls.push(`${init?.method ?? "GET"} ${url.pathname}`);
    if (url.pathname === "/v1/platforms") return Response.json({ platforms: [{ name: "telegram", enabled: true, relay: false, home_channel: home }] });
    if (url.pathname.endsWith("/handoff")) return Response.json({ handoff: { state: "pending", platform: "telegram" } }, { status: 202 });
    return Response.json({ session: { id: "s1", title: "notes", running: false } });
  }) as typeof fetch;
  return { calls, client: new ApiClient({ baseUrl: "http://edge.test", token: "t", tokenSource: "HERMES_EDGE_TOKEN" }, fetchImpl) };
}

function options(client: ApiClient, progress: PassThrough) {
  const { io } = memoryIo();
  return { client, io, style: styleFor({}, {}), session: { id: "s1", title: "notes" } as Session, platform: "telegram", thread: true, wait: false, progress };
}

describe("regression: the operator could not see that a handoff would land in a non-admin's DM", () => {
  it("the CLI prints the destination, with who set the home and when, before it queues the handoff", async () => {
    const { calls, client } = fakeWorker({ chat_id: "-100123", thread_id: null, source: "sethome", set_by: "111", set_at: SET_AT, refused: null });
    const progress = new PassThrough();
    let out = "";
    progress.on("data", (d: Buffer) => (out += d.toString()));
    const printedBeforePost: string[] = [];
    const post = client.json.bind(client);
    client.json = (async (method: string, path: string, body?: unknown, signal?: AbortSignal) => {
      if (method === "POST") printedBeforePost.push(out);
      return post(method, path, body, signal);
    }) as typeof client.json;
    await runHandoff(options(client, progress));
    expect(printedBeforePost[0]).toContain("→ telegram chat -100123, thread: new topic; home set by /sethome from user 111 on 2026-12-01");
    expect(calls).toContain("POST /v1/sessions/s1/handoff");
  });

  it("a home the Worker refuses (set by a non-admin) stops the CLI before anything is queued", async () => {
    const { calls, client } = fakeWorker({
      chat_id: "111",
      thread_id: null,
      source: "sethome",
      set_by: "111",
      set_at: SET_AT,
      refused: "the telegram home channel was set by user 111, who is not in TELEGRAM_ADMIN_USERS",
    });
    await expect(runHandoff(options(client, new PassThrough()))).rejects.toThrow(CliError);
    await expect(runHandoff(options(client, new PassThrough()))).rejects.toThrow(/not in TELEGRAM_ADMIN_USERS/);
    expect(calls.filter((c) => c.startsWith("POST"))).toEqual([]);
  });
});

describe("a handoff to the DM of the account linked to the CLI (--dm, /handoff <platform> dm)", () => {
  it("needs no home channel and asks for the operator's person", async () => {
    const { calls, client } = fakeWorker(null as unknown as Record<string, unknown>);
    const bodies: unknown[] = [];
    const post = client.json.bind(client);
    client.json = (async (method: string, path: string, body?: unknown, signal?: AbortSignal) => {
      if (method === "POST") bodies.push(body);
      return post(method, path, body, signal);
    }) as typeof client.json;
    const progress = new PassThrough();
    let out = "";
    progress.on("data", (d: Buffer) => (out += d.toString()));
    await runHandoff({ ...options(client, progress), person: "operator" });
    expect(out).toContain("→ telegram DM of the account linked to this CLI");
    expect(bodies).toEqual([{ platform: "telegram", person: "operator", thread: true }]);
    expect(calls).toContain("POST /v1/sessions/s1/handoff");
  });
});

describe("the CLI's wait for a handoff (long polls of GET /v1/sessions/<id>/handoff)", () => {
  /** The fake Worker with the states its long polls answer, one per poll. */
  function phased(states: string[]) {
    const { calls, client } = fakeWorker({ chat_id: "-100123", thread_id: null, source: "sethome", set_by: "111", set_at: SET_AT, refused: null });
    const get = client.json.bind(client);
    client.json = (async (method: string, path: string, body?: unknown, signal?: AbortSignal) => {
      if (method === "GET" && path.includes("/handoff?wait=")) {
        calls.push(`GET ${path}`);
        const state = states.shift() ?? "completed";
        return { handoff: { state, platform: "telegram", destination: state === "completed" ? { chat_id: "-100123", thread_id: "7" } : null } };
      }
      return get(method, path, body, signal);
    }) as typeof client.json;
    const progress = new PassThrough();
    let out = "";
    progress.on("data", (d: Buffer) => (out += d.toString()));
    return { calls, run: () => runHandoff({ ...options(client, progress), wait: true }), out: () => out };
  }

  it("says it was picked up when a poll finds it running, then that it was handed off", async () => {
    const f = phased(["pending", "running", "running", "completed"]);
    expect((await f.run()).outcome).toBe("completed");
    const out = f.out();
    expect(out.indexOf("picked up; transferring…")).toBeGreaterThan(out.indexOf("Queued handoff"));
    expect(out.indexOf("Handed off: the session now lives in telegram chat -100123, thread 7.")).toBeGreaterThan(out.indexOf("picked up"));
    expect(f.calls.filter((c) => c.includes("state=pending"))).toHaveLength(2);
    expect(f.calls.filter((c) => c.includes("state=running"))).toHaveLength(2);
  });

  it("a handoff finished before the first poll answers goes from queued to handed off, with no pickup line", async () => {
    const f = phased(["completed"]);
    expect((await f.run()).outcome).toBe("completed");
    expect(f.out()).not.toContain("picked up");
    expect(f.out()).toContain("Handed off: the session now lives in telegram chat -100123, thread 7.");
  });
});
