import { formatSse } from "../agent/index.ts";

const encoder = new TextEncoder();

/** What a caller is told when the session's object dies under its turn (a deploy, a crash). */
export const TURN_STREAM_LOST = {
  code: "session_restarted",
  message: "the session restarted mid-turn; the turn runs again by itself: read its reply with GET /v1/sessions/:id/messages",
} as const;

/**
 * A turn's event stream as the HTTP caller gets it. The stream comes from the session's
 * object over RPC; when that object dies mid-turn the stream breaks ("ReadableStream
 * received over RPC disconnected prematurely"). Passed on as is, the response would end
 * without a last event and the runtime would log an uncaught exception; here it ends with
 * an `error` event that says what happened and where the reply will be.
 */
export function turnStream(upstream: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = upstream.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch {
        controller.enqueue(encoder.encode(formatSse("error", TURN_STREAM_LOST)));
        controller.close();
        return;
      }
      if (chunk.done) controller.close();
      else controller.enqueue(chunk.value);
    },
    cancel(reason) {
      // The caller went away: the turn goes on and is stored (SseSink ignores a closed writer).
      return reader.cancel(reason);
    },
  });
}
