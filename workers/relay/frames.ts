/**
 * Relay frames (SPEC section 6): JSON objects, one per line (`\n`). Several frames may
 * share a WebSocket message and one frame may span several; malformed lines are skipped
 * and unknown types ignored. Shared by the connector and the gateway.
 */

/** Largest frame either side accepts; a longer line closes the socket with 1009. */
export const MAX_FRAME_BYTES = 1024 * 1024;

/** WebSocket close codes of the relay. */
export const CLOSE = {
  /** Bad, unknown, revoked or (reason "expired") expired credentials. */
  unauthorized: 4401,
  /** Reason `replaced`: a newer socket of the gateway took over (the old one went silent); `busy`: a newcomer refused while the current socket is live. */
  replaced: 4409,
  /** A frame over MAX_FRAME_BYTES. */
  tooBig: 1009,
} as const;

/** Where a platform message came from, as the gateway sees it. */
export interface WireSource {
  platform: string;
  chat_id: string;
  chat_type: string;
  user_id: string;
  user_name: string | null;
  thread_id: string | null;
  /** Slack workspace id. */
  scope_id?: string | null;
}

export interface InboundEvent {
  text: string;
  message_id: string;
  source: WireSource;
  session_key: string;
}

/** Capabilities of one fronted platform, answering its hello. */
export interface Descriptor {
  contract_version: 1;
  platform: string;
  label: string;
  max_message_length: number;
  /** How max_message_length counts: UTF-16 code units or code points ("chars"). */
  len_unit: "utf16" | "chars";
  supports_edit: boolean;
  supports_threads: boolean;
  supports_draft_streaming: boolean;
  markdown_dialect: string;
  supported_ops: string[];
}

export type OutboundOp = "send" | "edit" | "typing" | "thread_create";

export interface OutboundAction {
  op: string;
  chat_id: string;
  content?: string;
  message_id?: string;
  thread_id?: string | null;
  reply_to?: string | null;
  thread_name?: string;
}

export interface OutboundResult {
  success: boolean;
  message_id?: string;
  thread_id?: string;
  /** thread_create: where messages of the new thread go (on Discord, the thread itself). */
  chat_id?: string;
  error?: string;
  code?: string;
}

/** Gateway → connector. */
export type GatewayFrame =
  | { type: "hello"; platform: string; botId: string }
  | { type: "inbound_ack"; bufferId: string }
  | { type: "interrupt"; session_key: string; reason?: string }
  | { type: "outbound"; requestId: string; action: OutboundAction; platform?: string }
  | { type: "going_idle" }
  | { type: "ping" };

/** Connector → gateway. */
export type ConnectorFrame =
  | { type: "descriptor"; descriptor: Descriptor }
  | { type: "inbound"; event: InboundEvent; bufferId: string }
  | { type: "interrupt_inbound"; session_key: string; chat_id: string }
  | { type: "outbound_result"; requestId: string; result: OutboundResult }
  | { type: "going_idle_ack" }
  | { type: "error"; code: string; message: string };

export function encodeFrame(frame: GatewayFrame | ConnectorFrame): string {
  return `${JSON.stringify(frame)}\n`;
}

/** What a chunk of text yielded. */
export interface Decoded {
  frames: Array<Record<string, unknown> & { type: string }>;
  /** Lines that were not JSON objects with a string `type` (skipped). */
  skipped: number;
  /** A line grew past MAX_FRAME_BYTES: the caller closes with 1009. */
  tooBig: boolean;
}

/** Splits text into frames, keeping a partial last line for the next chunk. */
export class FrameDecoder {
  partial: string;

  constructor(partial = "") {
    this.partial = partial;
  }

  push(text: string): Decoded {
    const all = this.partial + text;
    const lines = all.split("\n");
    this.partial = lines.pop() ?? "";
    const out: Decoded = { frames: [], skipped: 0, tooBig: this.partial.length > MAX_FRAME_BYTES };
    for (const line of lines) {
      if (line.length > MAX_FRAME_BYTES) {
        out.tooBig = true;
        continue;
      }
      if (line.trim() === "") continue;
      try {
        const v = JSON.parse(line) as unknown;
        if (typeof v === "object" && v !== null && !Array.isArray(v) && typeof (v as { type?: unknown }).type === "string") {
          out.frames.push(v as Record<string, unknown> & { type: string });
        } else out.skipped++;
      } catch {
        out.skipped++;
      }
    }
    return out;
  }
}
