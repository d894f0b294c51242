/**
 * Matrix transactions as a homeserver pushes them to an application service (spec
 * `transactions.yaml`): client events with ids, sender and room. Shapes follow the spec's
 * examples (test/corpus/matrix has the real ones); ids are the tests'.
 */
import { MATRIX_TEST } from "./signing.ts";

let seq = 0;
const nextId = () => `$ev${++seq}-${Date.now().toString(36)}`;

export interface MessageOpts {
  eventId?: string;
  /** The thread root (`m.thread`). */
  thread?: string;
  /** Mention the bot (`m.mentions` and a pill). */
  mention?: boolean;
  msgtype?: string;
  extra?: Record<string, unknown>;
}

export const mx = {
  /** A room message event. */
  message(roomId: string, sender: string, body: string, o: MessageOpts = {}): Record<string, unknown> {
    const content: Record<string, unknown> = { msgtype: o.msgtype ?? "m.text", body, ...o.extra };
    if (o.mention) {
      content.body = `Hermes: ${body}`;
      content.format = "org.matrix.custom.html";
      content.formatted_body = `<a href="https://matrix.to/#/${MATRIX_TEST.bot}">Hermes</a>: ${body}`;
      content["m.mentions"] = { user_ids: [MATRIX_TEST.bot] };
    }
    if (o.thread) content["m.relates_to"] = { rel_type: "m.thread", event_id: o.thread, is_falling_back: true, "m.in_reply_to": { event_id: o.thread } };
    return {
      type: "m.room.message",
      event_id: o.eventId ?? nextId(),
      room_id: roomId,
      sender,
      origin_server_ts: 1_700_000_000_000,
      unsigned: { age: 10 },
      content,
    };
  },
  /** An invite of the bot into a room. */
  invite(roomId: string, sender: string, direct = true): Record<string, unknown> {
    return {
      type: "m.room.member",
      event_id: nextId(),
      room_id: roomId,
      sender,
      state_key: MATRIX_TEST.bot,
      origin_server_ts: 1_700_000_000_000,
      content: { membership: "invite", is_direct: direct },
    };
  },
  /** An encrypted event (what every message of an end-to-end encrypted room is). */
  encrypted(roomId: string, sender: string): Record<string, unknown> {
    return {
      type: "m.room.encrypted",
      event_id: nextId(),
      room_id: roomId,
      sender,
      origin_server_ts: 1_700_000_000_000,
      content: {
        algorithm: "m.megolm.v1.aes-sha2",
        ciphertext: "AwgAEnAC",
        device_id: "RJYKSTBOIE",
        sender_key: "IlRMeOPX2e0MurIyfWEucYBRVOEEUMrOHqn/8mLqMjA",
        session_id: "X3lUlvLELLYxeTx4yOVu6UDpasGEVO0Jbu+QFnm0cKQ",
      },
    };
  },
  /** A transaction body. */
  txn(events: readonly Record<string, unknown>[], extra: Record<string, unknown> = {}): string {
    return JSON.stringify({ events, ...extra });
  },
};
