/**
 * One workerd line Vitest's output should not carry: kj's "disconnected: read end of pipe was
 * aborted", logged when a stream's reader goes away before its writer is done, with the stack
 * line of raw addresses that comes in the same log entry. It is the same kind of line as those
 * the test plugin already drops (`ignoreMessages` in @cloudflare/vitest-plugin: "disconnected:
 * operation canceled", "disconnected: WebSocket was aborted", …), but missing from its list; the
 * plugin takes no handler of our own, so the filter sits on the Vitest process's stdout and
 * stderr, where the plugin writes workerd's entries, one `write` each. Nothing else is touched:
 * a failing test still fails, and every other workerd entry (an uncaught exception, a rejected
 * `waitUntil()`) shows.
 */
const PIPE_ABORTED = /^exception = kj\/async-io\.c\+\+:\d+: disconnected: read end of pipe was aborted\r?\n(stack:( \S*workerd@[0-9a-f]+)+\r?\n)?$/;

type Write = NodeJS.WriteStream["write"];
const WRAPPED = Symbol.for("hermes-edge.dropRuntimeNoise");

/** Wraps `stream.write` so that the pipe entry is dropped; once per stream (the config loads more than once). */
export function dropRuntimeNoise(stream: { write: Write }): void {
  if ((stream.write as unknown as Record<symbol, boolean>)[WRAPPED]) return;
  const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
  const filtered = (chunk: unknown, ...rest: unknown[]) => (typeof chunk === "string" && PIPE_ABORTED.test(chunk) ? true : write(chunk, ...rest));
  Object.defineProperty(filtered, WRAPPED, { value: true });
  stream.write = filtered as Write;
}
