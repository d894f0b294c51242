import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { CliError } from "./errors.ts";

/** A Worker the CLI has logged in to. */
export interface Profile {
  url: string;
  token: string;
}

/** The CLI's config file: named profiles. */
export interface CliConfig {
  profiles: Record<string, Profile>;
}

export const DEFAULT_PROFILE = "default";

/** `<configDir>/hermes-edge/config.json`. */
export function configFile(configDir: string): string {
  return path.join(configDir, "hermes-edge", "config.json");
}

/** A profile name: letters, digits, `.`, `_` and `-`, so it is safe in a shell and a file. */
export function checkProfileName(name: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(name)) throw new CliError(`'${name}' is not a profile name (letters, digits, . _ -, at most 64)`, 2);
  return name;
}

function isProfile(v: unknown): v is Profile {
  return typeof v === "object" && v !== null && typeof (v as Profile).url === "string" && typeof (v as Profile).token === "string";
}

/** Reads the config file; a missing file is an empty config, a broken one a one-line error. */
export function readConfig(file: string): CliConfig {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { profiles: {} };
    throw new CliError(`cannot read ${file}: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new CliError(`${file} is not valid JSON; fix it or delete it and run \`hermes-edge login\` again`);
  }
  const raw = (parsed as { profiles?: unknown }).profiles;
  const profiles: Record<string, Profile> = {};
  if (typeof raw === "object" && raw !== null) {
    for (const [name, p] of Object.entries(raw)) if (isProfile(p)) profiles[name] = { url: p.url, token: p.token };
  }
  return { profiles };
}

/**
 * Writes the config readable by the user only: the directory 0700, the file 0600 (written
 * to a temporary file first and renamed, so a crash never leaves half a file).
 */
export function writeConfig(file: string, config: CliConfig): void {
  const dir = path.dirname(file);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}

/** Adds or replaces one profile. */
export function saveProfile(file: string, name: string, profile: Profile): void {
  const config = readConfig(file);
  config.profiles[name] = profile;
  writeConfig(file, config);
}

/** Removes one profile; false when there was none of that name. */
export function removeProfile(file: string, name: string): boolean {
  const config = readConfig(file);
  if (!(name in config.profiles)) return false;
  delete config.profiles[name];
  writeConfig(file, config);
  return true;
}
