import * as z from "zod";
import { targetCodec } from "../target.ts";
import type { ReplyTarget } from "../types.ts";

/** Where a WhatsApp reply goes: a user's chat (its wa_id), and the message being answered (read receipts, typing). */
export interface WhatsAppTarget {
  /** The user's WhatsApp id (their number in digits). */
  waId: string;
  /** The wamid of the user's message this answers, or null (a handoff, a note). */
  replyTo: string | null;
  private: boolean;
}

/** A wamid: `wamid.` and base64 (Meta's own examples also show older ids without the prefix). */
const WAMID = /^[A-Za-z0-9._=+/-]{1,256}$/;

/** The stored ref `{c, m?}`: the wa_id, and the wamid answered. */
export const whatsappTargets = targetCodec<WhatsAppTarget, { c: string; m?: string | undefined }>({
  platform: "whatsapp",
  wire: () => z.strictObject({ c: z.string().regex(/^\d{1,32}$/), m: z.string().regex(WAMID).optional() }),
  toWire: (t) => ({ c: t.waId, m: t.replyTo }),
  fromWire: (w, isPrivate) => ({ waId: w.c, replyTo: w.m ?? null, private: isPrivate }),
  where: (t) => ({ chatId: t.waId, threadId: null }),
});

/** A reply target: every WhatsApp chat of this bot is a private one. */
export function whatsappTarget(waId: string, replyTo: string | null): ReplyTarget {
  return whatsappTargets.encode({ waId, replyTo, private: true });
}
