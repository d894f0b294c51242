import { PlatformApiError, type Shown } from "../platforms/types.ts";
import { errorMessage } from "../log/index.ts";

/** How a reply may be shown where it goes. */
export interface ChannelCaps {
  /** A shown message can be edited (replies stream by edits). */
  edits: boolean;
  typing: boolean;
  /** Least time between two edits of a streamed reply here, in ms. */
  editIntervalMs: number;
}

/**
 * Where one reply goes, whatever carries it: a platform adapter at the edge, or the relay
 * connection on a gateway (whose connector renders and splits for the platform). Replies
 * are Markdown; the channel renders them natively. Failures are {@link PlatformApiError}s.
 */
export interface ReplyChannel {
  readonly caps: ChannelCaps;
  /** Shows "typing…" for a few seconds. */
  typing(): Promise<void>;
  /**
   * Shows `markdown` as the reply: `live` shows what fits the first message (the reply is
   * still streaming), `final` shows all of it (more messages when it is long). `ids` are
   * the messages already showing it, which are edited rather than posted again. Returns
   * the ids showing it now. `key` names the reply ({@link replyKey}): a channel that may
   * not learn what its first post did (a relay gateway) sends it so the post is not made
   * twice; the others ignore it.
   */
  show(markdown: string, ids: readonly string[], mode: "live" | "final", key?: string): Promise<Shown>;
  /** Posts a separate new message (a note that the reply could not be delivered in place). */
  post(markdown: string): Promise<string[]>;
}

/** The idempotency key of a turn's reply: the same for its live and its final showing, across restarts. */
export function replyKey(turnId: string): string {
  return `reply:${turnId}`;
}

/** A short description of a delivery failure, for one log line (never a token). */
export function describe(err: unknown): string {
  return err instanceof PlatformApiError ? `${err.code}: ${err.message}` : errorMessage(err);
}
