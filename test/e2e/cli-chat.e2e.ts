import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { CLI, harness, type Harness } from "../support/e2e.ts";
import type { FakeLlm } from "../support/fake-llm.ts";
import type { E2eWorker } from "../support/bundled-worker.ts";
import { conversation } from "../support/fake-llm.ts";

/**
 * The real thing: the Worker's deploy bundle in miniflare with its Durable Objects, the real CLI
 * as a child process talking to it through a pipe, and a fake model on loopback.
 */
let h: Harness;
let worker: E2eWorker;
let llm: FakeLlm;

beforeAll(async () => {
  h = await harness();
  ({ worker, llm } = h);
});

beforeEach(() => h.reset());

interface Cli {
  child: ChildProcessWithoutNullStreams;
  stdout: () => string;
  stderr: () => string;
  /** Resolves when stdout (or stderr) contains `text`. */
  waitFor(text: string, stream?: "stdout" | "stderr"): Promise<void>;
  exit: Promise<number>;
}

function runCli(args: string[]): Cli {
  const child = spawn(process.execPath, [...CLI, ...args], {
    env: { ...process.env, HERMES_EDGE_URL: worker.url, HERMES_EDGE_TOKEN: worker.token, NO_COLOR: "1" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const seen = { stdout: "", stderr: "" };
  const waiters: Array<{ text: string; stream: "stdout" | "stderr"; resolve: () => void }> = [];
  const collect = (stream: "stdout" | "stderr") => (d: Buffer) => {
    seen[stream] += d.toString();
    for (const w of waiters.filter((w) => w.stream === stream && seen[stream].includes(w.text))) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
  };
  child.stdout.on("data", collect("stdout"));
  child.stderr.on("data", collect("stderr"));
  const exit = new Promise<number>((resolve) => child.on("close", (code) => resolve(code ?? -1)));
  return {
    child,
    stdout: () => seen.stdout,
    stderr: () => seen.stderr,
    waitFor: (text, stream = "stdout") => (seen[stream].includes(text) ? Promise.resolve() : new Promise((resolve) => waiters.push({ text, stream, resolve }))),
    exit,
  };
}

async function api<T>(p: string): Promise<T> {
  const res = await fetch(`${worker.url}${p}`, { headers: { authorization: `Bearer ${worker.token}` } });
  return (await res.json()) as T;
}

describe("hermes-edge chat against the local Worker", () => {
  it("streams replies through a pipe, and the second turn replays the first exchange", async () => {
    const cli = runCli(["chat"]);
    cli.child.stdin.write("my name is Ada\n");
    await cli.waitFor("echo: my name is Ada");
    cli.child.stdin.end("what is my name?\n");
    expect(await cli.exit).toBe(0);
    expect(cli.stdout()).toBe("echo: my name is Ada\necho: what is my name?\n");
    expect(conversation(llm.calls[1]!.body).map((m) => m.content)).toEqual(["my name is Ada", "echo: my name is Ada", "what is my name?"]);
    const id = /new session (\S+)/.exec(cli.stderr())![1]!;
    const { session } = await api<{ session: { title: string; message_count: number } }>(`/v1/sessions/${id}`);
    expect(session).toMatchObject({ title: "my name is Ada", message_count: 4 });
  });

  it("Ctrl-C interrupts the running reply, keeps the partial text, and the chat goes on", async () => {
    llm.hold(["a long story begins"], ["and never ends"]);
    const cli = runCli(["chat"]);
    cli.child.stdin.write("tell me a story\n");
    await cli.waitFor("a long story begins");
    // The held reply is never released: only the interrupt can end it.
    cli.child.kill("SIGINT");
    await cli.waitFor("[interrupted]", "stderr");
    cli.child.stdin.end("still there?\n");
    expect(await cli.exit).toBe(0);
    expect(cli.stdout()).toContain("echo: still there?");
    const id = /new session (\S+)/.exec(cli.stderr())![1]!;
    const { messages } = await api<{ messages: Array<{ role: string; content: string; finish_reason: string | null }> }>(`/v1/sessions/${id}/messages`);
    expect(messages.slice(0, 2)).toMatchObject([
      { role: "user", content: "tell me a story" },
      { role: "assistant", content: "a long story begins", finish_reason: "interrupted" },
    ]);
  });

  it("sessions list --json prints exactly what GET /v1/sessions returns", async () => {
    const cli = runCli(["sessions", "list", "--json"]);
    expect(await cli.exit).toBe(0);
    expect(JSON.parse(cli.stdout())).toEqual(await api("/v1/sessions?limit=50"));
  });

  it("| head: a reader that goes away is no failure (exit code 0, nothing on stderr)", async () => {
    const cli = runCli(["sessions", "list"]);
    // Our end of the pipe closes before the CLI has its answer to write: it gets EPIPE.
    cli.child.stdout.destroy();
    expect(await cli.exit).toBe(0);
    expect(cli.stderr()).toBe("");
  });

  it("a wrong token is one clear line and exit code 1", async () => {
    const child = spawn(process.execPath, [...CLI, "sessions", "list"], {
      env: { ...process.env, HERMES_EDGE_URL: worker.url, HERMES_EDGE_TOKEN: "wrong", NO_COLOR: "1" },
    });
    let err = "";
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number>((r) => child.on("close", (c) => r(c ?? -1)));
    expect(code).toBe(1);
    expect(err.trim().split("\n")).toHaveLength(1);
    expect(err).toContain("rejected the token (401)");
  });
});
