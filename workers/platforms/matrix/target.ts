import * as z from "zod";
import { targetCodec } from "../target.ts";
import type { ReplyTarget } from "../types.ts";
import { EVENT_ID, ROOM_ID } from "./ids.ts";

/** Where a Matrix reply goes: a room, a thread in it (its root event), the message answered. */
export interface MatrixTarget {
  roomId: string;
  /** The thread's root event id (`m.thread`), or null outside threads. */
  threadRoot: string | null;
  /** The event this answers (quoted by `m.in_reply_to`), or null (a handoff, a note). */
  replyTo: string | null;
  private: boolean;
}

/** The stored ref `{r, t?, m?}`: the room, the thread root, the event answered. */
export const matrixTargets = targetCodec<MatrixTarget, { r: string; t?: string | undefined; m?: string | undefined }>({
  platform: "matrix",
  wire: () => z.strictObject({ r: z.string().regex(ROOM_ID), t: z.string().regex(EVENT_ID).optional(), m: z.string().regex(EVENT_ID).optional() }),
  toWire: (t) => ({ r: t.roomId, t: t.threadRoot, m: t.replyTo }),
  fromWire: (w, isPrivate) => ({ roomId: w.r, threadRoot: w.t ?? null, replyTo: w.m ?? null, private: isPrivate }),
  where: (t) => ({ chatId: t.roomId, threadId: t.threadRoot }),
});

/** A reply target; `direct`: the room is a DM (faster edits). */
export function matrixTarget(roomId: string, threadRoot: string | null, replyTo: string | null, direct: boolean): ReplyTarget {
  return matrixTargets.encode({ roomId, threadRoot, replyTo, private: direct });
}
