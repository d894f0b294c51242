import { errorMessage } from "../../log/index.ts";

/**
 * MCP server configuration: the `MCP_SERVERS` var at the edge, the `--mcp <file>` file on
 * the gateway. Both are a JSON list of `{"name", "url"}` (remote) or, on the gateway only,
 * `{"name", "command", "args"?, "env"?}` (a local server started as a child process).
 */
import { isLoopbackHost } from "../loopback.ts";

/** A remote server, reached over Streamable HTTP (or the older HTTP+SSE transport). */
export interface McpUrlEntry {
  name: string;
  url: string;
}

/** A local server started as a child process speaking MCP on stdin/stdout (gateway only). */
export interface McpCommandEntry {
  name: string;
  command: string;
  args: string[];
  env: Record<string, string>;
}

export type McpServerEntry = McpUrlEntry | McpCommandEntry;

/** Parsed configuration: the usable entries, and one line per entry (or file) that is not. */
export interface McpConfig<E extends McpServerEntry = McpServerEntry> {
  servers: E[];
  problems: string[];
}

/** Server names: letters, digits, `-` and `_`, up to 32, no `__` (it separates server and tool). */
export const SERVER_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_)){0,31}$/;

/** The secret holding a server's bearer token: `MCP_TOKEN_<NAME>`, upper-cased, other characters as `_`. */
export function tokenSecretName(server: string): string {
  return `MCP_TOKEN_${server.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`;
}

function checkUrl(raw: unknown, name: string): string | { url: string } {
  if (typeof raw !== "string" || raw.trim() === "") return "url must be a non-empty string";
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return "url is not a valid absolute URL";
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && isLoopbackHost(url.hostname))) return "url must be https:// (plain http only for localhost)";
  if (url.username || url.password) return `url must not carry credentials; put the token in the secret ${tokenSecretName(name)}`;
  return { url: url.toString() };
}

function checkCommand(entry: Record<string, unknown>): string | Omit<McpCommandEntry, "name"> {
  if (typeof entry.command !== "string" || entry.command.trim() === "") return "command must be a non-empty string";
  const args = entry.args ?? [];
  if (!Array.isArray(args) || args.some((a) => typeof a !== "string")) return "args must be a list of strings";
  const env = entry.env ?? {};
  if (typeof env !== "object" || env === null || Array.isArray(env) || Object.values(env).some((v) => typeof v !== "string"))
    return "env must be an object of string values";
  return { command: entry.command, args: args as string[], env: env as Record<string, string> };
}

/**
 * Parses a server list. Never throws: bad JSON, a list that is not a list, entries without
 * a valid name, duplicate names (names are compared as their token secret name, so `docs`
 * and `DOCS` clash) and bad fields each become a problem line, and the other entries are
 * kept. `commands: false` (the Worker) refuses command entries.
 */
export function parseMcpServers(text: string | undefined, opts: { source: string; commands: boolean }): McpConfig {
  const out: McpConfig = { servers: [], problems: [] };
  if (text === undefined || text.trim() === "") return out;
  let list: unknown;
  try {
    list = JSON.parse(text);
  } catch (err) {
    out.problems.push(`${opts.source} is not valid JSON (${errorMessage(err)})`);
    return out;
  }
  if (!Array.isArray(list)) {
    out.problems.push(`${opts.source} must be a JSON list of servers, like [{"name":"docs","url":"https://…/mcp"}]`);
    return out;
  }
  const seen = new Map<string, string>();
  list.forEach((raw: unknown, i) => {
    const where = `${opts.source} entry ${i + 1}`;
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return void out.problems.push(`${where} must be an object`);
    const entry = raw as Record<string, unknown>;
    const name = entry.name;
    if (typeof name !== "string" || !SERVER_NAME.test(name)) {
      return void out.problems.push(`${where}: name must be 1-32 letters, digits, - or _ (no "__"), got ${JSON.stringify(name ?? null)}`);
    }
    const key = tokenSecretName(name);
    const clash = seen.get(key);
    if (clash !== undefined)
      return void out.problems.push(`${where}: server name "${name}" is already used by "${clash}" (names must differ after upper-casing)`);
    seen.set(key, name);
    const hasUrl = entry.url !== undefined;
    const hasCommand = entry.command !== undefined;
    if (hasUrl === hasCommand) return void out.problems.push(`server ${name}: give either "url" or "command"`);
    if (hasCommand) {
      if (!opts.commands) return void out.problems.push(`server ${name}: "command" servers run only on the gateway (hermes-edge gateway --mcp <file>)`);
      const cmd = checkCommand(entry);
      return void (typeof cmd === "string" ? out.problems.push(`server ${name}: ${cmd}`) : out.servers.push({ name, ...cmd }));
    }
    const url = checkUrl(entry.url, name);
    if (typeof url === "string") out.problems.push(`server ${name}: ${url}`);
    else out.servers.push({ name, url: url.url });
  });
  return out;
}

/** Narrows an entry to a remote one. */
export function isUrlEntry(entry: McpServerEntry): entry is McpUrlEntry {
  return "url" in entry;
}

/**
 * A server's bearer token from `env` (the Worker's env, or the gateway's environment).
 * The secrets are named at run time, so this is the one place they are read by computed
 * name; only string values count.
 */
export function tokenFor(env: object, server: string): string | undefined {
  const value = (env as Record<string, unknown>)[tokenSecretName(server)];
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}
