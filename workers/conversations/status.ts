import { probeModel } from "../agent/index.ts";
import { isLoopbackUrl } from "../agent/loopback.ts";
import { db } from "../db/client.ts";
import { appliedMigrations, cronLastRun } from "../db/meta.ts";
import { MIGRATIONS } from "../db/migrations.ts";
import { PLATFORMS, type PlatformName } from "../platforms/names.ts";

export type { StatusProblem, WorkerStatus } from "./status-types.ts";
import { adapterFor } from "../platforms/registry.ts";
import { CATALOG, settings, type SettingProblem } from "../settings.ts";
import { VERSION } from "../version.ts";
import { connectionStatus } from "./connections.ts";
import { homeChannel } from "./home.ts";
import type { PlatformStatus, StatusProblem, WorkerStatus } from "./status-types.ts";
import { relayObject } from "./stubs.ts";

/** The cron runs every minute; this long without a run is a problem. */
export const CRON_LATE_MS = 5 * 60_000;

/**
 * Checks the Worker's setup from the inside, where the platform tokens are: the model
 * provider, each platform's own view of its webhook, the relay gateways, the D1 migrations
 * and the cron. `origin` is the URL the Worker was reached at (webhooks must point there).
 */
export async function workerStatus(env: Env, origin: string, now: number): Promise<WorkerStatus> {
  const s = settings(env);
  const d = db(env);
  // This machine (local `wrangler dev`): the cron and public webhooks do not apply.
  const local = isLoopbackUrl(origin);
  const problems: StatusProblem[] = [];
  const [model, applied, lastRun, platforms, gateways] = await Promise.all([
    probeModel(s.model, (i, init) => fetch(i, init)),
    appliedMigrations(d),
    cronLastRun(d),
    Promise.all(PLATFORMS.map((name) => platformStatus(env, name, origin, local))),
    Promise.all([...s.relaySecrets.keys()].map(async (id) => ({ id, ...(await relayObject(env, id).status()) }))),
  ]);
  for (const p of s.problems) problems.push(settingFix(p));
  const { problem, ...modelInfo } = model;
  if (problem) problems.push({ area: "model", ...problem });
  for (const p of platforms) problems.push(...p.problems);
  const missing = MIGRATIONS.filter((m) => !applied.includes(m));
  if (missing.length > 0)
    problems.push({
      area: "d1",
      problem: `${missing.length} D1 migration(s) not applied: ${missing.join(", ")}`,
      fix: local
        ? "npx wrangler d1 migrations apply DB --local"
        : "npm run deploy (applies them, then deploys), or npx wrangler d1 migrations apply DB --remote",
    });
  for (const g of gateways) {
    const serves = PLATFORMS.filter((p) => s.platforms[p].gateway === g.id);
    if (serves.length > 0 && !g.connected)
      problems.push({
        area: "relay",
        problem: `gateway ${g.id} serves ${serves.join(", ")} but is not connected (${g.buffered} message(s) waiting)`,
        fix: `run it: GATEWAY_RELAY_URL=${origin} GATEWAY_RELAY_ID=${g.id} GATEWAY_RELAY_SECRET=… npx hermes-edge gateway`,
      });
    if (g.dropped > 0)
      problems.push({
        area: "relay",
        problem: `gateway ${g.id}'s buffer dropped ${g.dropped} message(s) while it was away`,
        fix: "keep the gateway running, or raise RELAY_BUFFER_LIMIT",
      });
  }
  if (!local && (lastRun === null || lastRun < now - CRON_LATE_MS)) {
    problems.push({
      area: "cron",
      problem: lastRun === null ? "the cron has never run" : `the cron last ran ${Math.round((now - lastRun) / 60_000)} min ago`,
      fix: "check [triggers] crons in wrangler.toml and deploy again (npm run deploy)",
    });
  }
  return {
    version: VERSION,
    model: modelInfo,
    platforms: platforms.map(({ problems: _, ...p }) => p),
    gateways,
    migrations: { expected: MIGRATIONS.length, applied: MIGRATIONS.length - missing.length, missing },
    cron: { last_run: lastRun },
    setting_problems: s.problems,
    problems,
  };
}

/** A setting's problem as a status problem: its message, and where that setting is set. */
export function settingFix(p: SettingProblem): StatusProblem {
  const secret = (CATALOG as Record<string, { kind: string }>)[p.setting]?.kind === "secret";
  const fix = secret
    ? `npx wrangler secret put ${p.setting} (locally: .dev.vars)`
    : `correct ${p.setting} in wrangler.toml [vars] and deploy again (npm run deploy); locally: wrangler dev --var ${p.setting}:…`;
  return { area: "settings", problem: p.message, fix };
}

async function platformStatus(env: Env, name: PlatformName, origin: string, local: boolean): Promise<PlatformStatus & { problems: StatusProblem[] }> {
  const problems: StatusProblem[] = [];
  const ps = settings(env).platforms[name];
  const home = await homeChannel(env, name);
  const base = {
    name,
    enabled: ps.enabled,
    missing: ps.missing,
    relay: ps.gateway,
    home_channel: home ? { chat_id: home.chat_id, thread_id: home.thread_id, source: home.source } : null,
  };
  const adapter = ps.enabled ? adapterFor(env, name) : null;
  if (!adapter) return { ...base, detail: null, problems };
  const connection = await connectionStatus(env, name);
  if (connection?.problem) problems.push({ area: name, ...connection.problem });
  if (connection) Object.assign(base, { connection });
  // A local Worker is not reachable from the platforms: their view of a webhook is not about it.
  if (local) return { ...base, detail: "local Worker: the platform cannot reach it (use a tunnel or deploy to try webhooks)", problems };
  const health = await adapter.health(origin);
  for (const p of health.problems) problems.push({ area: name, ...p });
  if (!home)
    problems.push({
      area: name,
      problem: `no home channel: handoffs to ${name} need one`,
      fix: `send /sethome in the chat that should receive them (or set ${name.toUpperCase()}_HOME_CHANNEL)`,
    });
  return { ...base, detail: health.detail, problems };
}
