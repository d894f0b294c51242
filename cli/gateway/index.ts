import { lookup } from "node:dns/promises";
import { hostname } from "node:os";
import { createModel, toolsFor, type ModelConfig } from "../../workers/agent/index.ts";
import type { PlatformName } from "../../workers/platforms/names.ts";
import { checkConnectorFrame } from "../../workers/relay/frames.ts";
import { realClock, type BusyPolicy, type Clock } from "../../workers/runtime/index.ts";
import { CliError } from "../client.ts";
import type { CliIo } from "../io.ts";
import { styleFor } from "../io.ts";
import { REFUSED_HINT, RelayClient, nodeWebSocket, type RelayEnd, type SocketFactory } from "./client.ts";
import { InboundHandler } from "./inbound.ts";
import { gatewayReadDeps } from "./media.ts";
import { attachmentSettings, readTurnAttachments, type AttachmentSettings } from "../../workers/attachments/index.ts";
import { gatewayMcpSource } from "./mcp.ts";
import type { McpServerEntry } from "../../workers/agent/mcp/index.ts";
import { Outbox } from "./outbox.ts";
import { GatewaySessions } from "./sessions.ts";
import { StatusLine } from "./status.ts";
import { GatewayStore } from "./store.ts";
import type { SignalBridgeConfig } from "./config.ts";
import { SignalBridge } from "./signal/bridge.ts";
import { SignalCli } from "./signal/cli.ts";
import { connectorOrigin } from "./signal/files.ts";
import { BridgeLocal } from "./signal/store.ts";
import { createLogger, errorMessage, logLines, textSink } from "../../workers/log/index.ts";

export type { SocketFactory } from "./client.ts";
export { GatewayStore } from "./store.ts";
export { NEW_SESSION_TEXT } from "./inbound.ts";

/** How long shutdown waits for `going_idle_ack` and for stopped turns to send their last words. */
export const SHUTDOWN_GRACE_MS = 2_000;

/** Printed (and exit code 1) when the connector keeps refusing credentials that once worked. */
export const DISABLED_MESSAGE = `relay disabled: ${REFUSED_HINT}; then start the gateway again`;

/** A validated gateway configuration (see `readGatewayConfig`). */
export interface GatewayConfig {
  /** Normalised `ws(s)://…/relay`. */
  relayUrl: string;
  gatewayId: string;
  secret: string;
  platforms: PlatformName[];
  /** Platforms this machine bridges to the Worker (`--bridge signal`). */
  bridge?: { signal?: SignalBridgeConfig };
  dbPath: string;
  model: ModelConfig;
  /** What a message does while its session runs a turn (`BUSY_POLICY`, as at the edge). */
  busyPolicy: BusyPolicy;
  /** MCP servers (`--mcp`) whose tools the agent may use here. */
  mcpServers: McpServerEntry[];
  /** `SYSTEM_PROMPT` and `LLM_CONTEXT_TOKENS`, as at the edge. */
  context: { systemPrompt: string | undefined; budget: number };
  /** ATTACHMENT_MAX_BYTES and LLM_TRANSCRIBE_MODEL (default: 10 MiB, no speech-to-text). */
  attachments?: AttachmentSettings;
}

/** Everything outside the gateway, injectable for tests. */
export interface GatewayDeps {
  io: Pick<CliIo, "stderr" | "env" | "signals" | "fetch">;
  socket?: SocketFactory;
  clock?: Clock;
  random?: () => number;
  mintToken?: (gatewayId: string, secret: string, exp: number) => Promise<string>;
}

function sleep(clock: Clock, ms: number): { promise: Promise<void>; cancel: () => void } {
  let handle: unknown;
  const promise = new Promise<void>((resolve) => (handle = clock.setTimeout(resolve, ms)));
  return { promise, cancel: () => clock.clearTimeout(handle) };
}

/**
 * Runs the gateway until SIGINT/SIGTERM (exit 0) or the connector disabling it (4401 twice
 * after a handshake, exit 1). Being replaced or refused (4409) is logged loudly and retried.
 * Resolves with the exit code.
 */
export async function runGateway(config: GatewayConfig, deps: GatewayDeps): Promise<number> {
  const { io } = deps;
  const clock = deps.clock ?? realClock;
  const style = styleFor(io.stderr, io.env);
  const status = new StatusLine(io.stderr, style);
  // Plain lines on stderr; a failure adds its message and causes, secrets taken out.
  const log = logLines(createLogger({ sink: textSink((line) => status.log(line)) }));
  let store: GatewayStore;
  try {
    store = GatewayStore.open(config.dbPath);
  } catch (err) {
    throw new CliError(`cannot open the gateway database ${config.dbPath}: ${errorMessage(err)}`, 1);
  }
  const model = createModel(config.model, io.fetch);

  let idleAcked: () => void = () => undefined;
  const idleAck = new Promise<void>((resolve) => (idleAcked = resolve));
  // The client and the outbox refer to each other; the link is read lazily.
  const link = {
    get connected() {
      return client.connected;
    },
    send: (f: Parameters<RelayClient["send"]>[0]) => client.send(f),
    whenConnected: () => client.whenConnected(),
  };
  const outbox = new Outbox(link, clock, log);
  const attachmentsSettings = config.attachments ?? attachmentSettings({ maxBytes: undefined, transcribeModel: undefined, model: config.model });
  // Local (stdio) and remote MCP servers from --mcp: the user's own programs become tools.
  const mcp = config.mcpServers.length > 0 ? gatewayMcpSource(config.mcpServers, { env: io.env, log }) : null;
  // The gateway runs inside a private network: names are resolved and checked first.
  const tools = toolsFor(model, {
    resolve: async (host) => (await lookup(host, { all: true })).map((a) => a.address),
    localNames: [hostname()],
    sources: mcp ? [mcp] : [],
  });
  const sessions = new GatewaySessions({
    store,
    model,
    tools: async () => tools,
    outbox,
    descriptor: (p) => client.descriptor(p),
    clock,
    busyPolicy: config.busyPolicy,
    context: config.context,
    log,
    fetch: io.fetch,
    attachments: (turn, earlier, signal) =>
      readTurnAttachments(turn.meta, earlier, gatewayReadDeps(attachmentsSettings, io.fetch, log, store.readingMarks(turn.turnId)), signal),
  });
  const handler = new InboundHandler({
    store,
    sessions,
    outbox,
    descriptor: (p) => client.descriptor(p),
    send: (f) => client.send(f),
    log,
    now: () => clock.now(),
  });
  const signalConfig = config.bridge?.signal;
  const bridge = signalConfig
    ? new SignalBridge({
        cli: new SignalCli({ ...signalConfig, fetch: io.fetch, clock, log, ...(deps.random ? { random: deps.random } : {}) }),
        local: new BridgeLocal(store.sql),
        link,
        clock,
        log,
        upload: { origin: connectorOrigin(config.relayUrl), gatewayId: config.gatewayId, secret: config.secret, fetch: io.fetch, now: () => clock.now() },
      })
    : null;
  const client: RelayClient = new RelayClient({
    url: config.relayUrl,
    gatewayId: config.gatewayId,
    secret: config.secret,
    platforms: [...config.platforms, ...(bridge ? ["signal"] : [])],
    socket: deps.socket ?? nodeWebSocket,
    clock,
    ...(deps.random ? { random: deps.random } : {}),
    ...(deps.mintToken ? { mintToken: deps.mintToken } : {}),
    onFrame: (obj) => {
      const checked = checkConnectorFrame(obj);
      if (checked.kind === "malformed") return log(`relay: ${checked.type} frame skipped (${checked.why})`);
      if (checked.kind !== "frame") return;
      const f = checked.frame;
      if (f.type === "inbound") handler.inbound(f);
      else if (f.type === "interrupt_inbound") handler.interrupt(f.session_key);
      else if (f.type === "outbound_result") outbox.result(f);
      else if (f.type === "going_idle_ack") idleAcked();
      else if (f.type === "bridge_inbound_ack") bridge?.acked(f.id);
      else if (f.type === "bridge_action") bridge?.action(f.actionId, f.call);
    },
    onDisconnect: () => outbox.disconnected(),
    onStatus: (st) => {
      status.status(st);
      if (st.state === "connected") bridge?.connected();
    },
    log,
  });

  let onSignal: () => void = () => {};
  const signalled = new Promise<"interrupted">((resolve) => (onSignal = () => resolve("interrupted")));
  io.signals.on("SIGINT", onSignal);
  io.signals.on("SIGTERM", onSignal);
  const bridging = signalConfig ? `; bridging signal (${signalConfig.account} at ${signalConfig.url})` : "";
  log(`gateway ${config.gatewayId}: ${new URL(config.relayUrl).host}, platforms ${config.platforms.join(", ") || "none"}${bridging}, model ${model.id}`);
  client.start();
  bridge?.start();
  // What an earlier run left (turns taken in, replies not yet delivered) goes on once connected.
  void client.whenConnected().then((up) => up && sessions.resume());

  const why: RelayEnd | "interrupted" = await Promise.race([client.ended, signalled]);
  // A second Ctrl-C during the short shutdown below gets Node's default: exit at once.
  io.signals.off("SIGINT", onSignal);
  io.signals.off("SIGTERM", onSignal);

  const running = handler.stop();
  const grace = sleep(clock, SHUTDOWN_GRACE_MS);
  const waits: Promise<unknown>[] = [sessions.idle()];
  if (why === "interrupted" && client.connected) {
    for (const key of running) client.send({ type: "interrupt", session_key: key, reason: "gateway stopping" });
    client.send({ type: "going_idle" });
    waits.push(idleAck);
  }
  await Promise.race([Promise.all(waits), grace.promise]);
  grace.cancel();
  await bridge?.stop();
  client.stop();
  outbox.stop();
  await mcp?.close();
  store.close();
  if (why === "disabled") {
    log(style.red(DISABLED_MESSAGE));
    status.end();
    return 1;
  }
  status.end();
  return 0;
}
