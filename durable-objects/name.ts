/**
 * A Durable Object's own name: the session id, session key or gateway id its stub was made
 * from (`getByName()`, workers/conversations/stubs.ts), so no method needs it as an argument.
 *
 * The runtime gives it as `ctx.id.name`, in every entry point (RPC, fetch, alarm, hibernated
 * socket). It gives none for a name over 1024 bytes (a session key built from hostile
 * platform ids can be that long), where the object was reached by a bare id
 * (`idFromString()`, an id listed by the test runtime: locally the first stub that reaches
 * an instance decides, for as long as the process lives), or for an alarm set before the
 * runtime passed names (Cloudflare, 2026-03-15). Each object therefore also keeps its name
 * in its own storage (the session row's id; the Inbox and the Relay write theirs to `meta`
 * the first time an instance starts with its name; an Inbox without one keeps the key its
 * first delivery names) and falls back on that: an object with nothing stored has nothing
 * to serve without its name.
 */
export function objectName(ctx: DurableObjectState, stored: () => string | null): string | null {
  return ctx.id.name ?? stored();
}

/** The error of an object asked to store something while it does not know its own name. */
export function nameless(kind: string): Error {
  return new Error(`this ${kind} object was reached without its name: make its stub with getByName() (workers/conversations/stubs.ts)`);
}
