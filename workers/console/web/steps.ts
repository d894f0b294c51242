import type { Platform } from "./types.ts";

/** One step of a platform's setup: what to do, and the text to paste (if any). */
export interface Step {
  text: string;
  code?: string;
}

const LABEL: Record<string, string> = { telegram: "Telegram", discord: "Discord", slack: "Slack" };
const label = (name: string) => LABEL[name] ?? name;

/**
 * The steps that set a platform up on this Worker, for where it runs. Locally (`npm start`,
 * `npm run dev`) every setting, secret or var, goes in `.dev.vars`, and the platform needs a
 * public https tunnel, since it cannot reach 127.0.0.1. Deployed, secrets are
 * `wrangler secret put` and vars are `[vars]` in wrangler.toml (then deploy). Either way the
 * platform's `*_ALLOWED_USERS` must list who may talk, or nobody may.
 */
export function platformSteps(p: Platform, where: "local" | "deployed", origin: string): Step[] {
  const missing = p.missing_settings ?? (p.missing ?? []).map((name) => ({ name, kind: "secret" as const }));
  const allowed = p.allowed_users;
  const needAllowed = allowed !== undefined && !allowed.set;
  const setupFor = (url: string) => `npx hermes-edge setup ${p.name} --url ${url}`;
  const steps: Step[] = [];
  if (p.bridged) {
    // No webhook and no tunnel: the gateway on the machine with the platform's daemon dials out to this Worker.
    const vars = missing.map((m) => `${m.name} = "${m.name === "BRIDGE_PLATFORMS" ? `${p.name}:<gatewayId>` : "…"}"`);
    if (needAllowed) vars.push(`${allowed.setting} = "<numbers or UUIDs>"`);
    if (vars.length > 0)
      steps.push({
        text: `Set these ${where === "local" ? "in .dev.vars" : "under [vars] in wrangler.toml, then deploy"} (and the gateway's id:secret in RELAY_SECRETS):`,
        code: vars.join("\n"),
      });
    steps.push({
      text: "Run the gateway on the machine where signal-cli's daemon runs (docs/platforms/signal.md):",
      code: `GATEWAY_RELAY_URL=${origin} GATEWAY_RELAY_ID=<gatewayId> GATEWAY_RELAY_SECRET=… SIGNAL_CLI_URL=http://127.0.0.1:8080 SIGNAL_ACCOUNT=+… ${p.setup ?? ""}`,
    });
    return steps;
  }
  if (where === "local") {
    const lines = [...missing.map((m) => `${m.name}=…`), ...(needAllowed ? [`${allowed.setting}=<your ${label(p.name)} user id>`] : [])];
    if (lines.length > 0)
      steps.push({
        text: "Add these lines to .dev.vars (beside wrangler.toml; locally it holds vars as well as secrets), then restart npm start or npm run dev:",
        code: lines.join("\n"),
      });
    steps.push({
      text: `${label(p.name)} cannot reach ${new URL(origin).host}: open a public tunnel to this Worker (in another terminal) and note the https address it prints:`,
      code: `cloudflared tunnel --url ${origin}`,
    });
    steps.push({ text: `Point ${label(p.name)} at the tunnel:`, code: setupFor("https://<the tunnel's address>") });
  } else {
    const secrets = missing.filter((m) => m.kind === "secret");
    const vars = [
      ...missing.filter((m) => m.kind === "var").map((m) => `${m.name} = "…"`),
      ...(needAllowed ? [`${allowed.setting} = "<your ${label(p.name)} user id>"`] : []),
    ];
    if (secrets.length > 0) steps.push({ text: "Set the secrets:", code: secrets.map((m) => `npx wrangler secret put ${m.name}`).join("\n") });
    if (vars.length > 0) steps.push({ text: "Set the vars under [vars] in wrangler.toml, then deploy (npm run deploy):", code: `[vars]\n${vars.join("\n")}` });
    steps.push({ text: `Point ${label(p.name)} at this Worker:`, code: p.setup ?? setupFor(origin) });
  }
  if (allowed) {
    steps.push({
      text: allowed.set
        ? `${allowed.setting} is set: only the users it lists may talk to the bot (a comma list of ${label(p.name)} user ids, or * for everyone).`
        : `Nobody may talk to the bot until ${allowed.setting} lists their ${label(p.name)} user ids (comma-separated), or * for everyone.`,
    });
  }
  return steps;
}
