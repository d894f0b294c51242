import type { Download } from "../../attachments/index.ts";
import type { TelegramEntity } from "../../format/index.ts";
import type { Part } from "../parts.ts";
import type { SignalTarget } from "./target.ts";
import type { BridgeState } from "../connection.ts";

/**
 * How the Signal adapter reaches Signal: not over HTTP but through the Relay object of the
 * gateway that bridges it (BRIDGE_PLATFORMS). Actions are stored there, in order, until the
 * gateway confirms them; enqueuing never waits on the gateway's socket.
 */
export interface SignalBridge {
  /** Stores actions (in order) for the gateway; resolves once they are stored. */
  enqueue(actions: SignalAction[]): Promise<void>;
  /** The bridge as the Relay object sees it now. */
  state(): Promise<BridgeState>;
  /** The UUID the gateway has seen for a phone number (so a home set by number keys like real messages), or null. */
  uuidOf(number: string): Promise<string | null>;
  /** An attachment the gateway uploaded, read from R2 (at most `maxBytes`). */
  file(key: string, maxBytes: number): Promise<Download>;
}

export type { BridgeState } from "../connection.ts";

/** One signal-cli JSON-RPC call (the gateway runs it as is, after the Relay resolved `editOf`). */
export interface SignalCall {
  method: "send" | "sendTyping" | "sendReceipt";
  params: Record<string, unknown>;
}

/**
 * An action for the gateway: a call; `ref` names the message a send makes (its Signal
 * timestamp is learnt from the result); `editOf` makes the send an edit of that message
 * (the Relay fills in `editTimestamp`: the latest edit's, as Signal clients require);
 * `live` marks a streaming update (coalesced, and capped per message); `transient` ones
 * (typing) are dropped rather than kept for a gateway that is away.
 */
export interface SignalAction {
  call: SignalCall;
  ref?: string;
  editOf?: string;
  live?: boolean;
  transient?: boolean;
}

const STYLE: Partial<Record<TelegramEntity["type"], string>> = {
  bold: "BOLD",
  italic: "ITALIC",
  strikethrough: "STRIKETHROUGH",
  code: "MONOSPACE",
  pre: "MONOSPACE",
};

/** signal-cli's `textStyle` strings, `start:length:STYLE`, in UTF-16 units (man signal-cli `--text-style`). */
export function textStyles(entities: readonly TelegramEntity[] | undefined): string[] {
  return (entities ?? []).flatMap((e) => {
    const style = STYLE[e.type];
    return style && e.length > 0 ? [`${e.offset}:${e.length}:${style}`] : [];
  });
}

/** Where a call goes: `recipient` (a list) for a person, `groupId` for a group. */
export function addressOf(t: SignalTarget): Record<string, unknown> {
  return t.groupId ? { groupId: t.groupId } : { recipient: [t.recipient ?? ""] };
}

/** A `send` of one rendered part; the first part of a reply in a group quotes the message answered. */
export function sendCall(t: SignalTarget, part: Part, quote: boolean): SignalCall {
  const styles = textStyles(part.entities);
  return {
    method: "send",
    params: {
      ...addressOf(t),
      message: part.text,
      ...(styles.length > 0 ? { textStyle: styles } : {}),
      ...(quote && t.replyTo ? { quoteTimestamp: Number(t.replyTo.timestamp), quoteAuthor: t.replyTo.author } : {}),
    },
  };
}
