import * as z from "zod";
import { targetCodec } from "../target.ts";
import type { ReplyTarget } from "../types.ts";

/** Where a Discord reply goes: a channel (a thread is a channel), or an interaction's webhook that edits its deferred answer. */
export interface DiscordTarget {
  /** The channel (or thread) replies are posted in; null when the interaction named none (it answers through its webhook). */
  channel: string | null;
  thread: string | null;
  interaction: { applicationId: string; token: string } | null;
  /** The message the reply answers (a Gateway message): the reply's first message references it. */
  replyTo: string | null;
  private: boolean;
}

/** A snowflake, as the interaction schema accepts it. */
const id = z.lazy(() => z.string().regex(/^[\w-]{1,64}$/));
/** An interaction token goes into a URL path (`webhooks/<app>/<token>`): no `/`, `?`, `%` or `..` can move it elsewhere. */
const token = z.lazy(() =>
  z
    .string()
    .regex(/^[\w-]+(\.[\w-]+)*$/)
    .max(1000),
);

type Wire = { c?: string | undefined; t?: string | undefined; a?: string | undefined; k?: string | undefined; r?: string | undefined };

/** The stored ref `{c?, t?, a?, k?, r?}`: channel, thread, the interaction's application id and token (both or neither), the message answered. */
export const discordTargets = targetCodec<DiscordTarget, Wire>({
  platform: "discord",
  wire: () =>
    z
      .strictObject({ c: id.optional(), t: id.optional(), a: id.optional(), k: token.optional(), r: id.optional() })
      .refine((w) => (w.a === undefined) === (w.k === undefined), "an interaction needs its application id and token")
      .refine((w) => w.c !== undefined || w.k !== undefined, "a target names a channel or an interaction"),
  toWire: (t) => ({ c: t.channel, t: t.thread, a: t.interaction?.applicationId, k: t.interaction?.token, r: t.replyTo ?? undefined }),
  fromWire: (w, isPrivate) => ({
    channel: w.c ?? null,
    thread: w.t ?? null,
    interaction: w.a !== undefined && w.k !== undefined ? { applicationId: w.a, token: w.k } : null,
    replyTo: w.r ?? null,
    private: isPrivate,
  }),
  where: (t) => ({ chatId: t.channel ?? "", threadId: t.thread }),
});

/** The reply target of an interaction (its token edits the deferred response), of a channel, or of a Gateway message (`replyTo`). */
export function discordTarget(
  channelId: string,
  threadId: string | null,
  isPrivate: boolean,
  interaction?: { applicationId: string; token: string },
  replyTo?: string,
): ReplyTarget {
  return discordTargets.encode({
    channel: channelId || null,
    thread: threadId,
    interaction: interaction ?? null,
    replyTo: replyTo ?? null,
    private: isPrivate,
  });
}
