import type { Download } from "../../attachments/index.ts";
import { renderParts, showParts, sameParts, type RenderSpec } from "../parts.ts";
import type {
  Attachment,
  Capabilities,
  CommandStyle,
  HandoffThread,
  Ingest,
  PlatformAdapter,
  PlatformEvent,
  PlatformHealth,
  ReplyTarget,
  Shown,
  Verification,
} from "../types.ts";
import { addressOf, sendCall, type SignalAction, type SignalBridge } from "./bridge.ts";
import { parseSignalBody } from "./parse.ts";
import { isSignalGroup, isSignalNumber, isSignalUser, signalTarget, signalTargets } from "./target.ts";

export type { BridgeState, SignalAction, SignalBridge } from "./bridge.ts";

/**
 * Signal counts a body in UTF-8 bytes (2,000: sc `ServiceConfig.MAX_MESSAGE_SIZE_BYTES`);
 * replies are split at 2,000 UTF-16 units, so Latin text stays within it, and a longer
 * body (other scripts) is sent by signal-cli as Signal's own apps do: trimmed, with the
 * whole text as a long-text attachment. Edits are cheap for the sender but every one is a
 * message to each recipient: a measured pace.
 */
export const SIGNAL_CAPABILITIES: Capabilities = {
  maxMessageLength: 2000,
  lengthUnit: "utf16",
  threads: false,
  edits: true,
  typing: true,
  editIntervalMs: { private: 2000, group: 3000 },
};

export const SIGNAL_RENDER: RenderSpec = { dialect: "signal", limit: SIGNAL_CAPABILITIES.maxMessageLength, unit: SIGNAL_CAPABILITIES.lengthUnit };

/** A typing indicator lasts 15 s on Signal (man signal-cli `sendTyping`): sent again only after this long. */
export const TYPING_RESEND_MS = 10_000;
/** How long a handoff into Signal waits for the bridging gateway, asking every {@link HANDOFF_POLL_MS}. */
export const HANDOFF_WAIT_MS = 60_000;
const HANDOFF_POLL_MS = 2_000;

/** What the Signal adapter runs on: the bridge (the Relay object of its gateway) and a clock. */
export interface SignalSettings {
  bridge: SignalBridge;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  handoffWaitMs?: number;
}

/** Per isolate: when "typing…" last went to a chat, and which messages were marked read. */
const typingSent = new Map<string, number>();
const receipted = new Set<string>();

function bounded<K>(m: Map<K, unknown> | Set<K>, max = 1024): void {
  const oldest = m.keys().next();
  if (m.size > max && !oldest.done) m.delete(oldest.value);
}

/**
 * Signal, bridged: a gateway on the user's machine follows signal-cli and sends each
 * received item up its relay socket; the edge parses it here, takes it in like a webhook
 * delivery, and answers with actions the gateway runs on signal-cli (`send` with text
 * styles, edits by `editTimestamp`, `sendTyping`, `sendReceipt`).
 */
export class SignalAdapter implements PlatformAdapter {
  readonly name = "signal" as const;
  readonly capabilities = SIGNAL_CAPABILITIES;
  readonly targets = signalTargets;
  readonly commands: CommandStyle = { prefix: "/", howToTalk: "Send a message to talk to the agent (in a group, mention the bot or reply to it)." };
  readonly #s: SignalSettings;
  readonly #now: () => number;

  /** Does no I/O. */
  constructor(settings: SignalSettings) {
    this.#s = settings;
    this.#now = settings.now ?? Date.now;
  }

  /** Signal has no webhook: its messages arrive over the relay socket of the gateway that bridges it. */
  async verify(): Promise<Verification> {
    return { ok: false, reason: "missing" };
  }

  ingest(body: string): Ingest {
    return parseSignalBody(body);
  }

  ack(_event: PlatformEvent): Response {
    return new Response(null, { status: 200 });
  }

  answerInline(): Response | null {
    return null;
  }

  /**
   * Renders and queues the parts: messages in `ids` are edited (by their refs; the Relay
   * knows their Signal timestamps once the gateway sent them), further parts sent. The ids
   * are refs made here, so a turn never waits for the gateway.
   */
  async show(target: ReplyTarget, markdown: string, ids: readonly string[], mode: "live" | "final"): Promise<Shown> {
    const t = signalTargets.read(target);
    const parts = renderParts(markdown, SIGNAL_RENDER, mode);
    const actions: SignalAction[] = [];
    const live = mode === "live";
    const shown = await showParts(
      {
        scope: `signal\u0000${target.ref}`,
        send: async (part, i) => {
          const ref = crypto.randomUUID();
          actions.push({ call: sendCall(t, part, i === 0 && ids.length === 0 && t.groupId !== null), ref, live });
          return ref;
        },
        edit: async (id, part) => {
          actions.push({ call: sendCall(t, part, false), editOf: id, live });
        },
      },
      parts,
      ids,
      mode,
    );
    if (actions.length > 0) await this.#s.bridge.enqueue(actions);
    if (mode === "final" || !shown.complete) return shown;
    return { ...shown, complete: sameParts(parts, renderParts(markdown, SIGNAL_RENDER, "final")) };
  }

  async post(target: ReplyTarget, markdown: string): Promise<string[]> {
    return (await this.show(target, markdown, [], "final")).ids;
  }

  /** Marks the answered message read (once) and shows "typing…" (15 s), at most every {@link TYPING_RESEND_MS}. */
  async typing(target: ReplyTarget): Promise<void> {
    const t = signalTargets.read(target);
    const now = this.#now();
    const last = typingSent.get(target.ref);
    if (last !== undefined && now - last < TYPING_RESEND_MS) return;
    typingSent.set(target.ref, now);
    bounded(typingSent);
    const actions: SignalAction[] = [];
    const answered = t.replyTo ? `${t.replyTo.author}:${t.replyTo.timestamp}` : null;
    if (t.replyTo && answered && !receipted.has(answered)) {
      receipted.add(answered);
      bounded(receipted);
      // The receipt goes to the message's author, in groups too.
      actions.push({ call: { method: "sendReceipt", params: { recipient: t.replyTo.author, targetTimestamps: [Number(t.replyTo.timestamp)], type: "read" } } });
    }
    actions.push({ call: { method: "sendTyping", params: addressOf(t) }, transient: true });
    await this.#s.bridge.enqueue(actions);
  }

  /**
   * A handoff writes first: it waits (up to {@link HANDOFF_WAIT_MS}) for the gateway that
   * bridges Signal to be connected, then fails with the reason; a reply queued for a gateway
   * that never comes back would look delivered.
   */
  async handoffGate(): Promise<{ ok: true } | { ok: false; reason: string }> {
    const wait = this.#s.handoffWaitMs ?? HANDOFF_WAIT_MS;
    const sleep = this.#s.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
    const until = this.#now() + wait;
    for (;;) {
      const state = await this.#s.bridge.state();
      if (state.connected) return { ok: true };
      if (this.#now() >= until)
        return {
          ok: false,
          reason: `the gateway that bridges Signal (${state.gatewayId}) was not connected for ${Math.round(wait / 1000)} s: start hermes-edge gateway --bridge signal there, then hand off again`,
        };
      await sleep(HANDOFF_POLL_MS);
    }
  }

  /** Signal has no threads: the destination chat itself takes the session. */
  async createHandoffThread(_parentChatId: string, _name: string): Promise<HandoffThread | null> {
    return null;
  }

  /** A chat named by a group id (`group:` prefix allowed), a UUID, or a number (keyed by its UUID once the gateway has seen it). */
  async destination(chatId: string, _threadId: string | null) {
    const named = chatId.startsWith("group:") ? chatId.slice("group:".length) : chatId;
    const group = isSignalGroup(named);
    const chat = group ? named : isSignalNumber(named) ? ((await this.#s.bridge.uuidOf(named)) ?? named) : named.toLowerCase();
    if (!group && !isSignalUser(chat)) signalTargets.read({ platform: "signal", private: true, ref: JSON.stringify({ u: chat }) });
    const source = { platform: "signal" as const, chatType: group ? ("group" as const) : ("dm" as const), chatId: chat, threadId: null };
    return { source, target: signalTarget(chat) };
  }

  download(a: Attachment, opts: { maxBytes: number; signal?: AbortSignal }): Promise<Download> {
    if (!a.ref) return Promise.resolve({ ok: false, reason: "failed", detail: "the gateway could not upload this file from signal-cli" });
    return this.#s.bridge.file(a.ref, opts.maxBytes);
  }

  describeTarget(target: ReplyTarget): { chatId: string; threadId: string | null } {
    return signalTargets.where(signalTargets.read(target));
  }

  /** The bridge as the Relay object sees it: the gateway connected, signal-cli reachable, actions waiting. */
  async health(_origin: string): Promise<PlatformHealth> {
    const s = await this.#s.bridge.state();
    const problems: PlatformHealth["problems"] = [];
    if (!s.connected)
      problems.push({
        problem: `the gateway that bridges Signal (${s.gatewayId}) is not connected${s.waiting > 0 ? `; ${s.waiting} action(s) wait for it` : ""}`,
        fix: `run hermes-edge gateway --bridge signal with GATEWAY_RELAY_ID=${s.gatewayId}, SIGNAL_CLI_URL and SIGNAL_ACCOUNT set`,
      });
    else if (s.reachable === false)
      problems.push({
        problem: `the gateway cannot reach signal-cli${s.detail ? ` (${s.detail})` : ""}`,
        fix: "start signal-cli -a <number> daemon --http 127.0.0.1:8080 on the gateway's machine and check SIGNAL_CLI_URL",
      });
    const reach = s.reachable === null ? "signal-cli not reported yet" : s.reachable ? "signal-cli reachable" : "signal-cli unreachable";
    return {
      detail: `bridged by gateway ${s.gatewayId}: ${s.connected ? "connected" : "not connected"}, ${reach}, ${s.waiting} action(s) waiting`,
      problems,
    };
  }
}
