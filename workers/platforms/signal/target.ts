import * as z from "zod";
import { targetCodec } from "../target.ts";
import type { ReplyTarget } from "../types.ts";

/** Where a Signal reply goes: a person (number or UUID) or a group, and the message answered. */
export interface SignalTarget {
  /** A phone number (`+…`) or a user's UUID, for a 1:1 chat. */
  recipient: string | null;
  /** A group's id (base64), for a group chat. */
  groupId: string | null;
  /** The message answered: its sender's timestamp and author (quotes, read receipts). */
  replyTo: { timestamp: string; author: string } | null;
  private: boolean;
}

const NUMBER = /^\+\d{5,20}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const GROUP = /^[A-Za-z0-9+/]{16,128}={0,2}$/;
const USER = z.lazy(() => z.string().refine((v) => NUMBER.test(v) || UUID.test(v)));

/** A phone number or UUID: a person. */
export const isSignalUser = (v: string) => NUMBER.test(v) || UUID.test(v);
/** A base64 group id. */
export const isSignalGroup = (v: string) => !isSignalUser(v) && GROUP.test(v);
export const isSignalNumber = (v: string) => NUMBER.test(v);

/** The stored ref `{u?, g?, t?, a?}`: recipient, group, and the answered message's timestamp and author. */
export const signalTargets = targetCodec<SignalTarget, { u?: string | undefined; g?: string | undefined; t?: string | undefined; a?: string | undefined }>({
  platform: "signal",
  wire: () =>
    z
      .strictObject({
        u: USER.optional(),
        g: z.string().regex(GROUP).optional(),
        t: z
          .string()
          .regex(/^\d{1,16}$/)
          .optional(),
        a: USER.optional(),
      })
      .refine((w) => (w.u === undefined) !== (w.g === undefined) && (w.t === undefined) === (w.a === undefined)),
  toWire: (t) => ({ u: t.recipient, g: t.groupId, t: t.replyTo?.timestamp, a: t.replyTo?.author }),
  fromWire: (w, isPrivate) => ({
    recipient: w.u ?? null,
    groupId: w.g ?? null,
    replyTo: w.t !== undefined && w.a !== undefined ? { timestamp: w.t, author: w.a } : null,
    private: isPrivate,
  }),
  where: (t) => ({ chatId: t.groupId ?? t.recipient ?? "", threadId: null }),
});

/** A reply target in a chat (a person, or a group id), answering a message or not. */
export function signalTarget(chatId: string, replyTo: SignalTarget["replyTo"] = null): ReplyTarget {
  const group = isSignalGroup(chatId);
  return signalTargets.encode({ recipient: group ? null : chatId, groupId: group ? chatId : null, replyTo, private: !group });
}
