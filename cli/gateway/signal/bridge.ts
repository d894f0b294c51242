import type { BridgeResult, SignalCall } from "../../../workers/relay/bridge.ts";
import type { GatewayFrameIn } from "../../../workers/relay/frames.ts";
import type { Clock } from "../../../workers/runtime/index.ts";
import type { SignalCli } from "./cli.ts";
import { uploadAttachments, type UploadTarget } from "./files.ts";
import type { BridgeLocal } from "./store.ts";

/** How often signal-cli's liveness is checked (and unacked items older than this sent again). */
export const CHECK_INTERVAL_MS = 30_000;

/** The relay socket as the bridge uses it. */
export interface BridgeLink {
  readonly connected: boolean;
  send(frame: GatewayFrameIn): boolean;
}

export interface SignalBridgeOptions {
  cli: SignalCli;
  local: BridgeLocal;
  link: BridgeLink;
  clock: Clock;
  log: (line: string) => void;
  /** Where received files are put (the Worker); without it, files are described, not read. */
  upload?: UploadTarget;
  /** Ids of received items (tests make them predictable). */
  newId?: () => string;
}

/**
 * `hermes-edge gateway --bridge signal`: follows signal-cli's event stream and sends each
 * received item up the relay socket (kept in the gateway's SQLite until the Worker acks it,
 * so a relay outage loses nothing), runs the actions the Worker sends down on signal-cli,
 * each once (a repeat after a reconnect is answered from the record), and reports whether
 * signal-cli answers.
 */
export class SignalBridge {
  readonly #o: SignalBridgeOptions;
  readonly #abort = new AbortController();
  #uuid: string | null = null;
  #streamUp = false;
  #reachable: boolean | null = null;
  #detail: string | undefined;
  #timer: unknown = null;
  #actions: Promise<void> = Promise.resolve();
  /** Received items are handled one after another (uploads first), so they go up in order. */
  #incoming: Promise<void> = Promise.resolve();
  #following: Promise<void> | null = null;

  constructor(opts: SignalBridgeOptions) {
    this.#o = opts;
  }

  /** Whether the event stream is up now (for the status line and tests). */
  get streaming(): boolean {
    return this.#streamUp;
  }

  /** Starts following signal-cli (and checking it every {@link CHECK_INTERVAL_MS}). */
  start(): void {
    void this.#learnSelf();
    this.#following = this.#o.cli.follow(
      (data) => this.#received(data),
      (up, why) => {
        this.#streamUp = up;
        void this.#checkNow(up ? undefined : why);
      },
      this.#abort.signal,
    );
    this.#tick();
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    if (this.#timer !== null) this.#o.clock.clearTimeout(this.#timer);
    this.#timer = null;
    await this.#following;
    await this.#incoming;
    await this.#actions;
  }

  /** The bot's UUID (mentions may carry only it): asked once, best effort. */
  async #learnSelf(): Promise<void> {
    const got = await this.#o.cli.rpc("getUserStatus", { recipient: [this.#o.cli.account] });
    const first = got.ok && Array.isArray(got.result) ? (got.result[0] as { uuid?: unknown } | undefined) : undefined;
    if (typeof first?.uuid === "string") this.#uuid = first.uuid;
  }

  #tick(): void {
    this.#timer = this.#o.clock.setTimeout(() => {
      void this.#checkNow().then(() => this.#resend(this.#o.clock.now() - CHECK_INTERVAL_MS));
      this.#tick();
    }, CHECK_INTERVAL_MS);
  }

  async #checkNow(streamDown?: string): Promise<void> {
    const c = await this.#o.cli.check();
    const detail = c.detail ?? (streamDown ? `event stream down: ${streamDown}` : undefined);
    this.#reachable = c.reachable;
    this.#detail = detail;
    this.#status();
  }

  #status(): void {
    if (this.#reachable === null || !this.#o.link.connected) return;
    this.#o.link.send({ type: "bridge_status", platform: "signal", reachable: this.#reachable, ...(this.#detail ? { detail: this.#detail } : {}) });
  }

  #received(data: string): void {
    let received: unknown;
    try {
      received = JSON.parse(data);
    } catch {
      this.#o.log("signal-cli: skipped an event that is not JSON");
      return;
    }
    this.#incoming = this.#incoming.then(async () => {
      const files = this.#o.upload ? await uploadAttachments(this.#o.cli, received, this.#o.upload, this.#o.log) : {};
      const body = JSON.stringify({ received, ...(Object.keys(files).length > 0 ? { files } : {}), self: { number: this.#o.cli.account, uuid: this.#uuid } });
      const id = this.#o.newId?.() ?? crypto.randomUUID();
      this.#o.local.add(id, "signal", body, this.#o.clock.now());
      this.#sendItem({ id, platform: "signal", body });
    });
  }

  #sendItem(item: { id: string; platform: string; body: string }): void {
    if (this.#o.link.send({ type: "bridge_inbound", platform: item.platform, id: item.id, body: item.body }))
      this.#o.local.markSent(item.id, this.#o.clock.now());
  }

  /** Unacked items (all of them on a new connection; on the timer, those sent before `sentBefore`), in order. */
  #resend(sentBefore: number | null): void {
    if (!this.#o.link.connected) return;
    for (const item of this.#o.local.waiting()) if (sentBefore === null || item.sentAt === null || item.sentAt < sentBefore) this.#sendItem(item);
  }

  /** The relay socket completed a handshake: everything not acked goes again, in order, and the daemon's state. */
  connected(): void {
    this.#resend(null);
    this.#status();
  }

  acked(id: string): void {
    this.#o.local.ack(id);
  }

  /** Runs an action from the Worker (one after another, in the order they came) and reports its result. */
  action(actionId: string, call: SignalCall): void {
    this.#actions = this.#actions.then(async () => {
      const result = this.#o.local.done(actionId) ?? (await this.#run(actionId, call));
      this.#o.link.send({ type: "bridge_result", actionId, result });
    });
  }

  async #run(actionId: string, call: SignalCall): Promise<BridgeResult> {
    const out = await this.#o.cli.rpc(call.method, call.params);
    if (!out.ok) {
      // A failure worth retrying is not remembered: the Worker sends it again.
      if (out.result.code !== "rate_limited" && out.result.code !== "network" && out.result.code !== "unavailable")
        this.#o.local.remember(actionId, out.result, this.#o.clock.now());
      return out.result;
    }
    const ts = (out.result as { timestamp?: unknown } | null)?.timestamp;
    const result: BridgeResult = { success: true, ...(typeof ts === "number" ? { timestamp: ts } : {}) };
    this.#o.local.remember(actionId, result, this.#o.clock.now());
    return result;
  }
}
