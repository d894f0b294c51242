/**
 * The text of a thrown value, for a message a person reads (a chat reply, an API body, a
 * problem shown by `status`). Logs take the error itself instead (`logger.warn(line, { err })`),
 * which keeps its stack and cause.
 */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The message and the messages of its causes, for a plain-text log line: `fetch failed (cause: connect ECONNREFUSED …)`. */
export function errorChain(err: unknown): string {
  const parts: string[] = [];
  let at: unknown = err;
  for (let depth = 0; at !== undefined && depth < 5; depth++) {
    parts.push(errorMessage(at));
    at = at instanceof Error ? at.cause : undefined;
  }
  return parts.join(" (cause: ") + ")".repeat(parts.length - 1);
}
