import type { CatalogValues } from "../settings/catalog.ts";
import type { ConnectionPorts, PlatformConnection } from "./connection.ts";
import type { PlatformAdapter } from "./types.ts";

/**
 * What `hermes-edge setup <platform>` is given: the Worker's URL, settings from the
 * environment or `.dev.vars`, and the CLI's network. Runs in Node (the CLI), never in the
 * Worker.
 */
export interface SetupContext {
  /** The Worker's URL, without a trailing slash. */
  workerUrl: string;
  fetch: typeof fetch;
  now(): number;
  /** A setting from the environment, else `./.dev.vars`; unset when empty. */
  setting(name: string): string | undefined;
  /** Each named setting, or an error naming every one missing with how to get it. */
  need<K extends string>(wanted: Record<K, string>): Record<K, string>;
  /** A fresh random secret (for hints such as "any random string, for example …"). */
  randomSecret(): string;
  /** Says once that the platform cannot reach a URL that is not public https. */
  warnIfLocal(): void;
}

/** One line of setup's report: a check that passed (`ok`), a warning, a failure, or text. */
export interface SetupLine {
  mark?: "ok" | "warn" | "fail";
  /** Secondary text, shown dim. */
  dim?: boolean;
  text: string;
}

/** What setup did: printed as lines, or as `json` with `--json`; exit code 1 when something is wrong. */
export interface SetupReport {
  json: unknown;
  lines: SetupLine[];
  exitCode: number;
}

/**
 * A platform's runtime half, exported by its folder's `platform.ts` and listed in `all.ts`:
 * its adapter, built from the parsed settings (no I/O, so a webhook is verified before
 * anything goes out), and its `hermes-edge setup` steps.
 */
export interface PlatformModule {
  build(values: CatalogValues): PlatformAdapter;
  setup(ctx: SetupContext): Promise<SetupReport>;
  /**
   * A connection the Worker holds open to receive the platform's messages (Discord's
   * Gateway), where the platform has one: whether the settings turn it on, and how to open it
   * over a host's ports (a Durable Object's, or a test's).
   */
  connection?: {
    on(values: CatalogValues): boolean;
    open(values: CatalogValues, ports: ConnectionPorts): PlatformConnection;
  };
}

/** Report lines, written as the CLI's other output is. */
export const line = {
  ok: (text: string): SetupLine => ({ mark: "ok", text }),
  warn: (text: string): SetupLine => ({ mark: "warn", text }),
  fail: (text: string): SetupLine => ({ mark: "fail", text }),
  dim: (text: string): SetupLine => ({ dim: true, text }),
  text: (text = ""): SetupLine => ({ text }),
};
