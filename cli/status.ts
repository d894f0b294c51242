import type { PlatformStatus, WorkerStatus } from "../workers/conversations/status-types.ts";
import { isLoopbackUrl } from "../workers/agent/loopback.ts";
import { ApiRefusal, type ApiClient } from "./client.ts";
import { println, type CliIo, type Style } from "./io.ts";
import { ago } from "./sessions.ts";
import { errorMessage } from "../workers/log/index.ts";

/** One problem `hermes-edge status` found, with the command (or setting) that fixes it. */
export interface Finding {
  area: string;
  problem: string;
  fix: string;
}

/** What `status --json` prints. */
export interface StatusReport {
  url: string;
  reachable: boolean;
  version: string | null;
  token: { accepted: boolean; source: string };
  worker: Omit<WorkerStatus, "problems"> | null;
  problems: Finding[];
}

/**
 * Collects the report: the Worker answers /health (as hermes-edge), the token is accepted,
 * then the Worker's own checks (`GET /v1/status`). Stops at the first of these that fails,
 * with that as the problem; never throws for a problem it can name.
 */
export async function collectStatus(api: ApiClient): Promise<StatusReport> {
  const url = api.target.baseUrl;
  const report: StatusReport = { url, reachable: false, version: null, token: { accepted: false, source: api.target.tokenSource }, worker: null, problems: [] };
  try {
    report.version = (await api.health()).version ?? null;
    report.reachable = true;
  } catch (err) {
    report.problems.push({
      area: "worker",
      problem: errorMessage(err),
      fix: "start it (npm start, npm run dev) or point HERMES_EDGE_URL / `hermes-edge login` at it",
    });
    return report;
  }
  let body: WorkerStatus;
  try {
    body = await api.json<WorkerStatus>("GET", "/v1/status");
  } catch (err) {
    const refused = err instanceof ApiRefusal && err.status === 401;
    const notSet = err instanceof ApiRefusal && err.code === "not_configured";
    report.problems.push({
      area: "token",
      problem: errorMessage(err),
      fix: notSet
        ? "set API_TOKEN on the Worker: npx wrangler secret put API_TOKEN"
        : refused && api.target.tokenSource === "HERMES_EDGE_TOKEN"
          ? "HERMES_EDGE_TOKEN is set and overrides `hermes-edge login` and ./.dev.vars: set it to the Worker's API_TOKEN, or unset it (unset HERMES_EDGE_TOKEN)"
          : refused
            ? "log in with the Worker's API_TOKEN: npx hermes-edge login"
            : "try again",
    });
    return report;
  }
  report.token.accepted = true;
  const { problems, ...worker } = body;
  report.worker = worker;
  report.problems.push(...problems);
  return report;
}

/**
 * How to run the Worker's cron locally: wrangler does not trigger it by itself, and
 * `/__scheduled` is wrangler 3's (404 under wrangler 4); this route runs it under `npm start`
 * and `npm run dev` alike, no flag needed.
 */
export function cronHint(url: string): string {
  return `curl ${url}/cdn-cgi/handler/scheduled`;
}

const LABEL = 10;

/** A held connection (Discord's Gateway): since when, the last heartbeat ACK and its latency, resumes, the last close code. */
export function connectionText(c: NonNullable<PlatformStatus["connection"]>, now: number): string {
  const closed = c.last_close_code !== null ? `last close ${c.last_close_code}${c.last_close_at !== null ? ` ${ago(c.last_close_at, now)}` : ""}` : null;
  if (c.state === "stopped") return `stopped (close ${c.last_close_code ?? "?"}): not retried until fixed, see below`;
  if (c.state === "connecting") return ["connecting", closed].filter(Boolean).join(" · ");
  const ack = c.last_ack_at !== null ? `last ACK ${ago(c.last_ack_at, now)}${c.latency_ms !== null ? ` (${c.latency_ms} ms)` : ""}` : "no ACK yet";
  const since = c.connected_since !== null ? `connected ${ago(c.connected_since, now)}` : "connected";
  return [since, ack, `${c.resumes} resume${c.resumes === 1 ? "" : "s"}`, closed].filter(Boolean).join(" · ");
}

/** The report for people: one line per part, ✓ or ✗, then each problem and its fix. */
export function formatStatus(r: StatusReport, now: number, style: Style): string[] {
  const bad = new Set(r.problems.map((p) => p.area));
  const line = (area: string, label: string, text: string, neutral = false) =>
    `${neutral ? style.dim("–") : bad.has(area) ? style.red("✗") : style.green("✓")} ${label.padEnd(LABEL)} ${text}`;
  const out = [style.bold(`hermes-edge status · ${r.url}`)];
  out.push(line("worker", "Worker", r.reachable ? `hermes-edge ${r.version}` : "not reachable"));
  if (r.reachable) out.push(line("token", "token", r.token.accepted ? `accepted (${r.token.source})` : `refused (${r.token.source})`));
  const w = r.worker;
  if (w) {
    // An older Worker sends no setting_problems.
    const unread = w.setting_problems?.length ?? 0;
    out.push(line("settings", "settings", unread === 0 ? "all understood" : `${unread} not understood (below)`));
    out.push(line("model", "model", `${w.model.model === w.model.provider ? w.model.provider : `${w.model.provider} ${w.model.model}`}: ${w.model.detail}`));
    for (const p of w.platforms) {
      if (!p.enabled) {
        out.push(line(p.name, p.name, style.dim(`not enabled${p.missing.length > 0 ? ` (set ${p.missing.join(", ")})` : ""}`), !bad.has(p.name)));
        continue;
      }
      const home = p.home_channel ? `home ${p.home_channel.chat_id}${p.home_channel.thread_id ? `/${p.home_channel.thread_id}` : ""}` : "no home channel";
      const where = p.relay ? `relayed to gateway ${p.relay}` : (p.detail ?? "");
      out.push(line(p.name, p.name, [where, home].filter(Boolean).join(" · ")));
      if (p.connection) out.push(line(p.name, "  Gateway", connectionText(p.connection, now)));
    }
    for (const g of w.gateways) {
      out.push(
        line(
          "relay",
          `gateway`,
          `${g.id} ${g.connected ? `connected (${g.platforms.join(", ") || "no platforms"})` : "not connected"} · ${g.buffered} buffered${g.dropped > 0 ? ` · ${g.dropped} dropped` : ""}`,
        ),
      );
    }
    out.push(line("d1", "D1", `${w.migrations.applied}/${w.migrations.expected} migrations applied`));
    const notRun = isLoopbackUrl(r.url)
      ? `has not run (wrangler does not run it locally; run it once: ${cronHint(r.url)})`
      : "has not run yet (it runs on wrangler.toml's [triggers] schedule)";
    out.push(line("cron", "cron", w.cron.last_run === null ? notRun : `ran ${ago(w.cron.last_run, now)}`, w.cron.last_run === null && !bad.has("cron")));
  }
  if (r.problems.length === 0) {
    out.push("", style.green("no problems found"));
    return out;
  }
  out.push("", style.bold(`${r.problems.length} problem${r.problems.length === 1 ? "" : "s"}:`));
  for (const p of r.problems) out.push(`  ${style.red("✗")} ${p.area}: ${p.problem}`, `    ${style.dim("fix:")} ${p.fix}`);
  return out;
}

/** `hermes-edge status [--json]`: exit 0 with no problem, 1 with any. */
export async function runStatus(opts: { api: ApiClient; io: CliIo; style: Style; json: boolean }): Promise<number> {
  const report = await collectStatus(opts.api);
  if (opts.json) println(opts.io.stdout, JSON.stringify(report));
  else for (const l of formatStatus(report, opts.io.now(), opts.style)) println(opts.io.stdout, l);
  return report.problems.length === 0 ? 0 : 1;
}
