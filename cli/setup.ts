import { randomBytes } from "node:crypto";
import path from "node:path";
import { PLATFORM_MODULES } from "../workers/platforms/all.ts";
import type { SetupContext, SetupLine } from "../workers/platforms/module.ts";
import type { PlatformName } from "../workers/platforms/names.ts";
import { errorMessage } from "../workers/log/index.ts";
import { isLoopbackUrl } from "../workers/agent/loopback.ts";
import { CliError, DEFAULT_URL, readDevVar } from "./client.ts";
import { println, type CliIo, type Style } from "./io.ts";

interface SetupOptions {
  io: CliIo;
  style: Style;
  url: string | undefined;
  json: boolean;
}

function settingFrom(io: CliIo, name: string): string | undefined {
  const v = io.env[name]?.trim();
  if (v) return v;
  return readDevVar(path.join(io.cwd, ".dev.vars"), name)?.trim() || undefined;
}

/** The settings, each with how to get it; one error naming every one that is missing. */
function needAll<K extends string>(io: CliIo, wanted: Record<K, string>): Record<K, string> {
  const found = {} as Record<K, string>;
  const missing: string[] = [];
  for (const [name, hint] of Object.entries(wanted) as Array<[K, string]>) {
    const v = settingFrom(io, name);
    if (v) found[name] = v;
    else missing.push(`  ${name}: ${hint}`);
  }
  if (missing.length > 0) {
    throw new CliError(`${missing.length === 1 ? "this setting is" : "these settings are"} not set (environment or ./.dev.vars):\n${missing.join("\n")}`);
  }
  return found;
}

/** `hermes-edge setup <platform>`: runs the platform's setup steps and prints their report; the exit code. */
export async function runSetup(platform: PlatformName, opts: SetupOptions): Promise<number> {
  const { io, style } = opts;
  const workerUrl = (opts.url ?? io.env.HERMES_EDGE_URL ?? DEFAULT_URL).replace(/\/+$/, "");
  const ctx: SetupContext = {
    workerUrl,
    fetch: io.fetch,
    now: io.now,
    setting: (name) => settingFrom(io, name),
    need: (wanted) => needAll(io, wanted),
    randomSecret: () => randomBytes(32).toString("base64url"),
    warnIfLocal: () => {
      if (!workerUrl.startsWith("https://") || isLoopbackUrl(workerUrl))
        println(io.stderr, style.yellow(`warning: ${workerUrl} is not a public https URL; ${platform} cannot reach it (pass --url https://…)`));
    },
  };
  const report = await PLATFORM_MODULES[platform].setup(ctx).catch((err: unknown) => {
    throw err instanceof CliError ? err : new CliError(errorMessage(err));
  });
  if (opts.json) println(io.stdout, JSON.stringify(report.json));
  else for (const l of report.lines) println(io.stdout, showLine(style, l));
  return report.exitCode;
}

function showLine(style: Style, l: SetupLine): string {
  const text = l.dim ? style.dim(l.text) : l.text;
  if (l.mark === "ok") return `${style.green("✓")} ${text}`;
  if (l.mark === "warn") return `${style.yellow("!")} ${text}`;
  if (l.mark === "fail") return `${style.red("✗")} ${text}`;
  return text;
}
