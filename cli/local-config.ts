import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

/** The generated config `npm start` / `npm run dev` run wrangler dev with (git-ignored). */
export const LOCAL_CONFIG = ".wrangler.local.toml";

/**
 * wrangler.toml's text without its `[secrets]` table: the header and its key lines, up to
 * the next blank line or table (comments after a blank line belong to what follows).
 */
export function withoutSecretsTable(toml: string): string {
  const out: string[] = [];
  let skipping = false;
  for (const line of toml.split("\n")) {
    const header = /^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$/.exec(line);
    if (header) skipping = header[1] === "secrets";
    else if (line.trim() === "") skipping = false;
    if (!skipping) out.push(line);
  }
  return out.join("\n");
}

/**
 * wrangler.toml declares API_TOKEN a required secret (`[secrets] required`), so a deploy
 * without it is refused. The same table makes wrangler dev read from .dev.vars only the
 * [vars] names and the required secrets: LLM_API_KEY, TELEGRAM_BOT_TOKEN and the other
 * optional secrets would silently be left out. The local runner therefore starts wrangler
 * dev with a copy of the config without that table, written next to the original so that
 * every relative path, .dev.vars and the local state resolve exactly as they do for it.
 * Returns the copy's path.
 */
export function writeLocalDevConfig(root: string): string {
  const source = readFileSync(path.join(root, "wrangler.toml"), "utf8");
  const file = path.join(root, LOCAL_CONFIG);
  writeFileSync(
    file,
    `# Generated from wrangler.toml by \`hermes-edge start\`/\`dev\` (without [secrets]); edit wrangler.toml instead.\n${withoutSecretsTable(source)}`,
  );
  return file;
}
