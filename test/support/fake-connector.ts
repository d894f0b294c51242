import type { RelaySocket, SocketFactory } from "../../cli/gateway/client.ts";
import { encodeFrame, type ConnectorFrameIn, type Descriptor, type InboundEvent } from "../../workers/relay/frames.ts";

export type SentFrame = Record<string, unknown> & { type: string };

/** A descriptor as the connector would send it, with test overrides. */
export function descriptor(platform: string, over: Partial<Descriptor> = {}): Descriptor {
  return {
    contract_version: 1,
    platform,
    label: platform,
    max_message_length: 4096,
    len_unit: "utf16",
    supports_edit: true,
    supports_threads: true,
    supports_draft_streaming: false,
    markdown_dialect: "commonmark",
    supported_ops: ["send", "edit", "typing", "thread_create"],
    edit_interval_ms: { private: 1100, group: 3100 },
    ...over,
  };
}

/** An inbound event for `chat` (message `id`), its session key derived from the chat. */
export function inboundEvent(chat: string, id: string, text: string, platform = "telegram"): InboundEvent {
  return {
    text,
    message_id: id,
    source: { platform, chat_id: chat, chat_type: "dm", user_id: "u1", user_name: "Ann", thread_id: null },
    session_key: `agent:main:${platform}:dm:${chat}`,
  };
}

/**
 * The connector's end of one socket, in memory: records what the gateway sends, lets the
 * test push raw messages or frames and close with a code. It answers outbound actions
 * with success unless `autoResult` is off.
 */
export class FakeSocket implements RelaySocket {
  readyState = 0;
  onopen: RelaySocket["onopen"] = null;
  onmessage: RelaySocket["onmessage"] = null;
  onclose: RelaySocket["onclose"] = null;
  onerror: RelaySocket["onerror"] = null;
  readonly url: string;
  readonly token: string;
  /** Frames the gateway sent, decoded. */
  readonly sent: SentFrame[] = [];
  /** Set when the gateway closed the socket. */
  closedByGateway: { code: number | undefined; reason: string | undefined } | null = null;
  autoResult = true;
  #partial = "";
  #messageIds = 0;
  readonly #watchers: Array<() => void> = [];

  constructor(url: string, headers: Record<string, string>) {
    this.url = url;
    this.token = (headers.authorization ?? "").replace(/^Bearer /, "");
  }

  send(data: string): void {
    if (this.readyState !== 1) throw new Error("send on a socket that is not open");
    const lines = (this.#partial + data).split("\n");
    this.#partial = lines.pop() ?? "";
    for (const line of lines) {
      const frame = JSON.parse(line) as SentFrame;
      this.sent.push(frame);
      if (this.autoResult && frame.type === "outbound") {
        const a = frame.action as { op: string; message_ids?: string[] };
        // As the connector does: an edit keeps its messages, a send makes one.
        const ids = a.op === "edit" && a.message_ids ? a.message_ids : [`m${++this.#messageIds}`];
        this.result(frame.requestId as string, { success: true, message_id: ids[0], message_ids: ids });
      }
    }
    for (const w of this.#watchers.splice(0)) w();
  }

  close(code?: number, reason?: string): void {
    if (this.readyState === 3) return;
    this.closedByGateway = { code, reason };
    this.readyState = 3;
    queueMicrotask(() => this.onclose?.({ code: code ?? 1005, reason: reason ?? "" }));
  }

  /** The connector accepts the upgrade. */
  open(): void {
    this.readyState = 1;
    this.onopen?.();
  }

  /** One raw WebSocket message. */
  push(text: string): void {
    this.onmessage?.({ data: text });
  }

  frame(...frames: ConnectorFrameIn[]): void {
    this.push(frames.map(encodeFrame).join(""));
  }

  result(
    requestId: string,
    result: { success: boolean; message_id?: string | undefined; message_ids?: string[]; error?: string; code?: string; retry_after?: number },
  ): void {
    queueMicrotask(() => this.readyState === 1 && this.frame({ type: "outbound_result", requestId, result }));
  }

  /** The connector closes the socket. */
  closeFromServer(code: number, reason = ""): void {
    this.readyState = 3;
    this.onclose?.({ code, reason });
  }

  /** Opens, waits for one hello per platform, answers each with a descriptor. */
  async handshake(platforms: string[] = ["telegram"], over: Partial<Descriptor> = {}): Promise<void> {
    this.open();
    await this.waitFor((f) => f.type === "hello", platforms.length);
    for (const p of platforms) this.frame({ type: "descriptor", descriptor: descriptor(p, over) });
  }

  /** Resolves with the `nth` frame (1-based) the gateway sent that matches, now or later. */
  waitFor(match: (f: SentFrame) => boolean, nth = 1): Promise<SentFrame> {
    return new Promise((resolve) => {
      const check = () => {
        const hits = this.sent.filter(match);
        if (hits.length >= nth) resolve(hits[nth - 1]!);
        else this.#watchers.push(check);
      };
      check();
    });
  }

  /** Contents of the `send` actions so far. */
  sends(): string[] {
    return this.sent
      .filter((f) => f.type === "outbound" && (f.action as { op: string }).op === "send")
      .map((f) => String((f.action as { content: string }).content));
  }

  /** What the reply of `chat` ended as: the content of its last final send or edit. */
  finals(chat: string): string[] {
    return this.sent
      .filter(
        (f) => f.type === "outbound" && (f.action as { final?: boolean; chat_id: string }).final === true && (f.action as { chat_id: string }).chat_id === chat,
      )
      .map((f) => String((f.action as { content: string }).content));
  }
}

/** The connector side of every dial: a factory for the gateway and the sockets it opened. */
export class FakeConnector {
  readonly sockets: FakeSocket[] = [];
  readonly #watchers: Array<() => void> = [];

  readonly factory: SocketFactory = (url, init) => {
    const s = new FakeSocket(url, init.headers);
    this.sockets.push(s);
    for (const w of this.#watchers.splice(0)) w();
    return s;
  };

  /** Resolves with the `n`th socket (1-based) once the gateway has dialled it. */
  socket(n: number): Promise<FakeSocket> {
    return new Promise((resolve) => {
      const check = () => (this.sockets.length >= n ? resolve(this.sockets[n - 1]!) : this.#watchers.push(check));
      check();
    });
  }
}
