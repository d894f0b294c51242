/**
 * The real `hermes-edge gateway` as a child process (SIGKILLed and restarted by the
 * scenarios), and a loopback TCP proxy in front of the Worker that records the bearer
 * token of every WebSocket upgrade passing through it: a captured token, as a thief on
 * the path would have it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createConnection, createServer, type Socket } from "node:net";
import path from "node:path";
import { PROJECT_ROOT } from "../../cli/local.ts";
import { onCleanup, Timeout, within } from "./harness.ts";

export interface GatewayProcess {
  stderr(): string;
  /** Resolves once stderr has shown `text` `times` times in all (bounded). */
  waitFor(text: string, times?: number, ms?: number): Promise<void>;
  kill9(): Promise<void>;
  /** SIGTERM, then the exit code (bounded; SIGKILL after the limit). */
  stop(): Promise<number>;
}

export interface GatewayOptions {
  relayUrl: string;
  gatewayId: string;
  secret: string;
  llmUrl: string;
  db: string;
  /** What it serves (default `--platforms telegram`); `--bridge signal` for the Signal scenario. */
  args?: string[];
  /** More environment (SIGNAL_CLI_URL, SIGNAL_ACCOUNT). */
  env?: Record<string, string>;
}

const count = (hay: string, needle: string) => hay.split(needle).length - 1;

/** Starts `node cli/bin.js gateway --platforms telegram --db <db>` (or `o.args`) against `relayUrl`. */
export function startGateway(o: GatewayOptions): GatewayProcess {
  const args = o.args ?? ["--platforms", "telegram"];
  const child: ChildProcess = spawn(process.execPath, [path.join(PROJECT_ROOT, "cli", "bin.js"), "gateway", ...args, "--db", o.db], {
    env: {
      ...process.env,
      ...o.env,
      GATEWAY_RELAY_URL: o.relayUrl,
      GATEWAY_RELAY_ID: o.gatewayId,
      GATEWAY_RELAY_SECRET: o.secret,
      LLM_BASE_URL: `${o.llmUrl}/v1`,
      LLM_MODEL: "fake",
      NO_COLOR: "1",
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const forget = onCleanup(() => {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) process.kill(-child.pid, "SIGKILL");
  });
  let err = "";
  const waiters: Array<() => void> = [];
  const wake = () => waiters.splice(0).forEach((w) => w());
  child.stderr!.on("data", (d: Buffer) => {
    err += d.toString();
    wake();
  });
  child.stdout!.resume();
  const exit = new Promise<number>((r) =>
    child.once("exit", (code, signal) => {
      forget();
      wake();
      r(code ?? (signal ? 128 : -1));
    }),
  );
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  return {
    stderr: () => err,
    async waitFor(text, times = 1, ms = 60_000) {
      const seen = async () => {
        while (count(err, text) < times) {
          if (gone()) throw new Error(`the gateway exited before "${text}":\n${err.slice(-2000)}`);
          await new Promise<void>((r) => waiters.push(r));
        }
      };
      try {
        await within(ms, seen(), `gateway: "${text}"`);
      } catch (e) {
        if (e instanceof Timeout) throw new Timeout(`${e.message}; it printed:\n${err.slice(-1500)}`);
        throw e;
      }
    },
    async kill9() {
      if (!gone() && child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      await exit;
    },
    async stop() {
      if (!gone() && child.pid !== undefined) process.kill(-child.pid, "SIGTERM");
      const timer = setTimeout(() => !gone() && child.pid !== undefined && process.kill(-child.pid, "SIGKILL"), 10_000);
      const code = await exit;
      clearTimeout(timer);
      return code;
    },
  };
}

export interface TokenTap {
  url: string;
  /** Bearer tokens of the upgrades seen, oldest first. */
  tokens: string[];
  close(): Promise<void>;
}

/** A TCP proxy to `port` on loopback that notes each request's `Authorization: Bearer` token. */
export async function tokenTap(port: number): Promise<TokenTap> {
  const tokens: string[] = [];
  const open = new Set<Socket>();
  const server = createServer((down) => {
    const up = createConnection({ port, host: "127.0.0.1" });
    open.add(down).add(up);
    let head = "";
    let parsed = false;
    down.on("data", (chunk: Buffer) => {
      if (!parsed) {
        head += chunk.toString("latin1");
        const end = head.indexOf("\r\n\r\n");
        if (end >= 0) {
          parsed = true;
          const m = /^authorization:\s*Bearer\s+(\S+)\s*$/im.exec(head.slice(0, end));
          if (m) tokens.push(m[1]!);
        }
      }
      up.write(chunk);
    });
    up.on("data", (chunk: Buffer) => down.write(chunk));
    const close = () => {
      down.destroy();
      up.destroy();
      open.delete(down);
      open.delete(up);
    };
    for (const s of [down, up]) {
      s.on("close", close);
      s.on("error", close);
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const addr = server.address();
  const local = typeof addr === "object" && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${local}`,
    tokens,
    close: () =>
      new Promise<void>((r) => {
        for (const s of open) s.destroy();
        server.close(() => r());
      }),
  };
}
