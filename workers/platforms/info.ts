/**
 * What the rest of the code knows about a platform without loading its adapter: names,
 * words for people, its settings, its links. Each adapter folder exports one (`info.ts`);
 * `names.ts` lists them. Pure data and pure functions: shared with the CLI, the Node relay
 * gateway and the console.
 */
export interface PlatformInfo<N extends string = string> {
  /** The platform's name in routes, session keys and settings (`<NAME>_ALLOWED_USERS`). */
  name: N;
  /** How people write it. */
  label: string;
  /** What the platform calls the fresh thread a handoff opens ("topic", "thread", "chat"). */
  threadWord: string;
  /** The settings that must all be set for the platform to be enabled. */
  required: readonly string[];
  /** The setting naming the home channel's thread, where the platform has one. */
  homeThread?: string;
  /** The npm package of its SDK, imported only inside its folder (the layer test checks). */
  sdk?: string;
  /** One line for `hermes-edge setup <name> --help`. */
  setupHelp: string;
  /** A web link to a chat (and thread) for people, or null where there is none. */
  link(chatId: string, threadId: string | null): string | null;
}
