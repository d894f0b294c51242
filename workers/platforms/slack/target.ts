import * as z from "zod";
import { targetCodec } from "../target.ts";
import type { ReplyTarget } from "../types.ts";

/** Where a Slack reply goes: a channel and thread, or a slash command's `response_url` (answers only its user sees). */
export interface SlackTarget {
  channel: string;
  /** The thread's root message ts, or null. */
  threadTs: string | null;
  responseUrl: string | null;
  private: boolean;
}

/** The stored ref `{c, t?, u?}`: channel id, thread ts, response_url (https only: the Worker posts the answer to it). */
export const slackTargets = targetCodec<SlackTarget, { c: string; t?: string | undefined; u?: string | undefined }>({
  platform: "slack",
  wire: () =>
    z.strictObject({
      c: z.string().regex(/^[A-Za-z0-9]{1,64}$/),
      t: z
        .string()
        .regex(/^\d{1,12}\.\d{1,12}$/)
        .optional(),
      u: z
        .url({ protocol: /^https$/ })
        .max(2048)
        .optional(),
    }),
  toWire: (t) => ({ c: t.channel, t: t.threadTs, u: t.responseUrl }),
  fromWire: (w, isPrivate) => ({ channel: w.c, threadTs: w.t ?? null, responseUrl: w.u ?? null, private: isPrivate }),
  where: (t) => ({ chatId: t.channel, threadId: t.threadTs }),
});

/** A reply target: a channel (and thread), or a slash command's `response_url` (ephemeral answers). */
export function slackTarget(channel: string, threadTs: string | null, isPrivate: boolean, responseUrl?: string): ReplyTarget {
  return slackTargets.encode({ channel, threadTs, responseUrl: responseUrl ?? null, private: isPrivate });
}
