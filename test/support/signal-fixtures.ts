/**
 * Signal test data: signal-cli receive items in the SSE shape (the params object, as
 * test/corpus/signal shows), the bot's identity, and an in-memory bridge that records the
 * actions the Signal adapter queues (its outbound path is the Relay object, not HTTP).
 */
import type { BridgeState, SignalAction, SignalBridge } from "../../workers/platforms/signal/index.ts";
import type { ApiCall } from "./fake-platforms.ts";

export const SIGNAL_TEST = {
  account: "+15550009999",
  botUuid: "0b7e3f31-6a44-4c4e-9a52-8d1f7f2a9b10",
  /** Two senders (their UUIDs are their ids) and their numbers. */
  alice: { uuid: "1a111111-1111-4111-8111-111111111111", number: "+15550001001", name: "Alice" },
  bob: { uuid: "2b222222-2222-4222-8222-222222222222", number: "+15550001002", name: "Bob" },
  group: "lx5vjquCWGByxrCFSDHf4C1W1XOjdH1m+JGz8bIJIBc=",
} as const;

let clock = 1_765_000_000_000;

interface Sender {
  uuid: string;
  number: string | null;
  name?: string;
}

function envelope(from: Sender, dataMessage: Record<string, unknown>, ts: number) {
  return {
    envelope: {
      source: from.number ?? from.uuid,
      sourceNumber: from.number,
      sourceUuid: from.uuid,
      sourceName: from.name ?? null,
      sourceDevice: 1,
      timestamp: ts,
      dataMessage: { timestamp: ts, expiresInSeconds: 0, viewOnce: false, ...dataMessage },
    },
    account: SIGNAL_TEST.account,
  };
}

const senderOf = (u: string): Sender =>
  u === SIGNAL_TEST.alice.uuid ? SIGNAL_TEST.alice : u === SIGNAL_TEST.bob.uuid ? SIGNAL_TEST.bob : { uuid: u, number: null };

/** Receive items as the SSE event's data (timestamps increase from one call to the next). */
export const sig = {
  dm: (user: string, text: string, ts = ++clock) => envelope(senderOf(user), { message: text }, ts),
  /** A group message; `mention` puts the bot's mention (U+FFFC) first. */
  group: (user: string, groupId: string, text: string, opts: { mention?: boolean; ts?: number } = {}) => {
    const ts = opts.ts ?? ++clock;
    const mention = opts.mention !== false;
    return envelope(
      senderOf(user),
      {
        message: mention ? `\ufffc ${text}` : text,
        ...(mention ? { mentions: [{ name: SIGNAL_TEST.account, number: SIGNAL_TEST.account, uuid: SIGNAL_TEST.botUuid, start: 0, length: 1 }] } : {}),
        groupInfo: { groupId, groupName: "Test group", revision: 1, type: "DELIVER" },
      },
      ts,
    );
  },
  /** What the gateway sends up: the item, and the bot's identity. */
  bridged: (received: unknown, files?: Record<string, string>) =>
    JSON.stringify({ received, ...(files ? { files } : {}), self: { number: SIGNAL_TEST.account, uuid: SIGNAL_TEST.botUuid } }),
};

/** A bridge that keeps the actions in memory, as ApiCalls (`method` is the signal-cli method, `body` its params). */
export class FakeSignalBridge implements SignalBridge {
  readonly actions: SignalAction[] = [];
  readonly calls: ApiCall[] = [];
  state_: BridgeState = { gatewayId: "home", connected: true, reachable: true, detail: null, waiting: 0 };
  readonly directory = new Map<string, string>();
  readonly files = new Map<string, Uint8Array>();

  async enqueue(actions: SignalAction[]): Promise<void> {
    for (const a of actions) {
      this.actions.push(a);
      this.calls.push({ method: a.call.method, path: a.editOf ? `edit:${a.editOf}` : (a.ref ?? ""), body: a.call.params });
    }
  }

  async state(): Promise<BridgeState> {
    return this.state_;
  }

  async uuidOf(number: string): Promise<string | null> {
    return this.directory.get(number) ?? null;
  }

  async file(key: string, maxBytes: number) {
    const bytes = this.files.get(key);
    if (!bytes) return { ok: false as const, reason: "failed" as const, detail: "gone" };
    if (bytes.length > maxBytes) return { ok: false as const, reason: "too_large" as const, detail: "big" };
    return { ok: true as const, bytes, mime: null };
  }
}
