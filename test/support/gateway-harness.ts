import { EventEmitter } from "node:events";
import path from "node:path";
import { PassThrough } from "node:stream";
import { runGateway, type GatewayConfig, type GatewayDeps } from "../../cli/gateway/index.ts";
import { FakeConnector } from "./fake-connector.ts";
import { FakeLlm } from "./fake-llm.ts";
import { serve } from "./http.ts";
import { ManualClock } from "./manual-clock.ts";
import { tempDir } from "./temp.ts";

export const GATEWAY_ID = "gw-test";
export const GATEWAY_SECRET = "relay-secret-do-not-log";

/** A fresh directory for one test's gateway database. */
export function tempDb(): string {
  return path.join(tempDir("he-gw-"), "gateway.db");
}

export interface GatewayRun {
  exit: Promise<number>;
  signals: EventEmitter;
  stderr: () => string;
  /** Resolves once stderr contains `text`. */
  waitForLog: (text: string) => Promise<void>;
}

/** Runs the gateway in-process against a fake connector and a manual clock. */
export function startGateway(opts: {
  connector: FakeConnector;
  clock: ManualClock;
  dbPath?: string;
  llmUrl?: string;
  platforms?: GatewayConfig["platforms"];
  mintToken?: GatewayDeps["mintToken"];
  random?: () => number;
  busyPolicy?: GatewayConfig["busyPolicy"];
}): GatewayRun {
  const stderr = new PassThrough();
  let err = "";
  const watchers: Array<() => void> = [];
  stderr.on("data", (d: Buffer) => {
    err += d.toString();
    for (const w of watchers.splice(0)) w();
  });
  const signals = new EventEmitter();
  const config: GatewayConfig = {
    relayUrl: "wss://edge.test/relay",
    gatewayId: GATEWAY_ID,
    secret: GATEWAY_SECRET,
    platforms: opts.platforms ?? ["telegram"],
    dbPath: opts.dbPath ?? tempDb(),
    model: opts.llmUrl ? { baseUrl: opts.llmUrl, model: "fake-model" } : { offlineDelayMs: 0 },
    busyPolicy: opts.busyPolicy ?? "queue",
    mcpServers: [],
    context: { systemPrompt: undefined, budget: 32_000 },
  };
  const exit = runGateway(config, {
    io: { stderr, env: {}, signals, fetch: (i, init) => fetch(i, init) },
    socket: opts.connector.factory,
    clock: opts.clock,
    random: opts.random ?? (() => 0.5),
    ...(opts.mintToken ? { mintToken: opts.mintToken } : {}),
  });
  const waitForLog = (text: string) =>
    new Promise<void>((resolve) => {
      const check = () => (err.includes(text) ? resolve() : void watchers.push(check));
      check();
    });
  return { exit, signals, stderr: () => err, waitForLog };
}

/** A FakeLlm on loopback; `served(n)` resolves once it has answered n calls (held ones included). */
export async function loopbackLlm() {
  const llm = new FakeLlm();
  let count = 0;
  const watchers: Array<() => void> = [];
  const server = await serve(async (req) => {
    const res = await llm.handle(req);
    count++;
    for (const w of watchers.splice(0)) w();
    return res;
  });
  const served = (n: number) =>
    new Promise<void>((resolve) => {
      const check = () => (count >= n ? resolve() : void watchers.push(check));
      check();
    });
  return { llm, url: `${server.url}/v1`, served, close: () => server.close() };
}
