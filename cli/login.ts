import { isLoopbackUrl } from "../workers/agent/loopback.ts";
import { ApiClient, CliError, normaliseUrl } from "./client.ts";
import { askLine, println, type CliIo, type Style } from "./io.ts";
import { checkProfileName, configFile, DEFAULT_PROFILE, readConfig, removeProfile, saveProfile } from "./profiles.ts";

export interface LoginOptions {
  io: CliIo;
  style: Style;
  url?: string | undefined;
  token?: string | undefined;
  profile?: string | undefined;
}

/**
 * Reads one line from a terminal without echoing it (raw mode; Enter ends it, Ctrl-C or
 * Ctrl-D gives up, Backspace deletes). Resolves null when given up.
 */
export function readHidden(io: CliIo, prompt: string): Promise<string | null> {
  const { stdin } = io;
  io.stderr.write(prompt);
  return new Promise((resolve) => {
    let value = "";
    let escape = false;
    const done = (result: string | null) => {
      stdin.off("data", onData);
      stdin.setRawMode?.(false);
      stdin.pause();
      io.stderr.write("\n");
      resolve(result);
    };
    const onData = (chunk: Buffer | string) => {
      for (const ch of String(chunk)) {
        // Arrow keys and the like arrive as ESC [ … letter: none of it is the token.
        if (escape) {
          if (/[A-Za-z~]/.test(ch)) escape = false;
          continue;
        }
        if (ch === "\x1b") escape = true;
        else if (ch === "\r" || ch === "\n") return done(value);
        else if (ch === "\x03" || ch === "\x04") return done(null);
        else if (ch === "\x7f" || ch === "\b") value = value.slice(0, -1);
        else if (ch >= " ") value += ch;
      }
    };
    stdin.setRawMode?.(true);
    stdin.on("data", onData);
    stdin.resume();
  });
}

function checkUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new CliError(`'${raw}' is not a URL (https://hermes-edge.<you>.workers.dev, say)`, 2);
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && isLoopbackUrl(url))) {
    throw new CliError(`${url.origin}: use https:// (the token would travel in the clear; plain http is only for this machine)`, 2);
  }
  return normaliseUrl(url.href);
}

/** `hermes-edge login`: checks the Worker and the token, then saves the profile. */
export async function runLogin(opts: LoginOptions): Promise<number> {
  const { io, style } = opts;
  const name = checkProfileName(opts.profile ?? io.env.HERMES_EDGE_PROFILE?.trim() ?? DEFAULT_PROFILE);
  const file = configFile(io.configDir);
  const tty = Boolean(io.stdin.isTTY);
  const saved = readConfig(file).profiles[name];
  let rawUrl = opts.url ?? (io.env.HERMES_EDGE_URL?.trim() || undefined) ?? saved?.url;
  if (!rawUrl && tty) rawUrl = (await askLine(io, "Worker URL: ")) ?? undefined;
  if (!rawUrl) throw new CliError("login needs the Worker's URL: pass --url https://…", 2);
  const url = checkUrl(rawUrl);

  // The URL is checked before a token is asked for or sent anywhere.
  const probe = new ApiClient({ baseUrl: url, token: undefined, tokenSource: "none" }, io.fetch);
  const health = await probe.health();

  let token = opts.token?.trim();
  if (!token) {
    if (!tty) throw new CliError("no --token given and stdin is not a terminal to ask on: pass --token <API_TOKEN>", 2);
    token = (await readHidden(io, `API_TOKEN for ${url} (not shown): `))?.trim();
    if (!token) throw new CliError("no token entered; nothing saved");
  }
  const client = new ApiClient({ baseUrl: url, token, tokenSource: "HERMES_EDGE_TOKEN" }, io.fetch);
  try {
    await client.checkToken();
  } catch (err) {
    if (err instanceof CliError && /rejected the token/.test(err.message)) throw new CliError(`the Worker at ${url} rejected that token (401); nothing saved`);
    throw err;
  }
  saveProfile(file, name, { url, token });
  println(io.stdout, `${style.green("✓")} logged in to ${url}${health.version ? ` (hermes-edge ${health.version})` : ""} as profile '${name}'`);
  println(io.stdout, style.dim(`  saved in ${file}${name === DEFAULT_PROFILE ? "" : `; use it with HERMES_EDGE_PROFILE=${name}`}`));
  return 0;
}

/** `hermes-edge logout`: removes the profile. */
export function runLogout(opts: Pick<LoginOptions, "io" | "style" | "profile">): number {
  const { io, style } = opts;
  const name = checkProfileName(opts.profile ?? io.env.HERMES_EDGE_PROFILE?.trim() ?? DEFAULT_PROFILE);
  const file = configFile(io.configDir);
  if (!removeProfile(file, name)) {
    println(io.stderr, style.dim(`no profile '${name}' in ${file}; nothing to do`));
    return 0;
  }
  println(io.stdout, `${style.green("✓")} logged out: profile '${name}' removed from ${file}`);
  return 0;
}
