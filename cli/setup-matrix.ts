import { randomBytes } from "node:crypto";
import { checkMatrix, registrationYaml } from "../workers/platforms/matrix/setup.ts";
import { CliError } from "./client.ts";
import { println, type CliIo, type Style } from "./io.ts";

interface MatrixSetupOptions {
  io: CliIo;
  style: Style;
  json: boolean;
  /** A setting from the environment, then ./.dev.vars. */
  setting(name: string): string | undefined;
}

/**
 * `setup matrix`: prints the registration YAML for the homeserver (the two tokens made here
 * when unset, with how to store them), then checks the homeserver answers, knows the bot,
 * and reaches the Worker's `/_matrix/app/v1/ping`. Exit 1 when a check fails.
 */
export async function setupMatrixCli(opts: MatrixSetupOptions, workerUrl: string): Promise<number> {
  const { io, style } = opts;
  const out = (s = "") => println(io.stdout, s);
  const homeserverUrl = opts.setting("MATRIX_HOMESERVER_URL");
  const botUser = opts.setting("MATRIX_BOT_USER");
  if (!homeserverUrl || !botUser) {
    throw new CliError(
      "MATRIX_HOMESERVER_URL (the homeserver's client URL, https://matrix.example.org) and MATRIX_BOT_USER (the bot, @hermes:example.org) must be set (environment or ./.dev.vars)",
    );
  }
  const made: string[] = [];
  const token = (name: string) => {
    const v = opts.setting(name);
    if (v) return v;
    made.push(name);
    return randomBytes(32).toString("base64url");
  };
  const asToken = token("MATRIX_AS_TOKEN");
  const hsToken = token("MATRIX_HS_TOKEN");
  const yaml = registrationYaml({ url: workerUrl, asToken, hsToken, botUser });
  const check = await checkMatrix({ homeserverUrl, asToken, botUser, fetch: io.fetch }).catch((err: Error) => {
    throw new CliError(err.message);
  });
  const ok = check.bot.ok && check.ping.ok;
  if (opts.json) return (out(JSON.stringify({ registration: yaml, made, ...check })), ok ? 0 : 1);
  out("The registration for the homeserver (Synapse: save it as hermes-edge.yaml, list it in app_service_config_files, restart):");
  out();
  out(yaml);
  for (const name of made)
    out(style.yellow(`! ${name} was not set: made one above. Store it on the Worker: npx wrangler secret put ${name} (and in .dev.vars locally)`));
  out(`${style.green("✓")} the homeserver answers (spec ${check.versions.slice(-1)[0] ?? "?"})`);
  if (check.bot.ok) out(`${style.green("✓")} the as_token acts as ${check.bot.userId}`);
  else out(`${style.yellow("!")} the homeserver refused the bot: ${check.bot.why} (is the registration loaded, with this as_token?)`);
  if (check.ping.ok)
    out(`${style.green("✓")} the homeserver reached the Worker's application service${check.ping.ms !== null ? ` in ${check.ping.ms} ms` : ""}`);
  else out(`${style.yellow("!")} the homeserver could not ping the Worker: ${check.ping.why} (is the Worker deployed with MATRIX_HS_TOKEN, at ${workerUrl}?)`);
  return ok ? 0 : 1;
}
