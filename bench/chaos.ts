/**
 * bench/chaos: the faults of issue 16 replayed on a real `wrangler dev` (restarted on the
 * same port and --persist-to storage after a kill -9) and the real `hermes-edge gateway`,
 * against loopback fakes of the model and the platforms. Nothing leaves the machine.
 *   a. kill -9 of wrangler mid-turn            e. a relay token captured and replayed
 *   b. kill -9 mid-final-delivery              f. shared-chat /resume by a second user
 *   c. the final edit answered 500, then 429   g. signed hostile bodies per platform
 *   d. the gateway SIGKILLed with messages in flight, restarted on the same --db (and d',
 *      wrangler killed under a live gateway)
 *   j. a 30,000-page PDF and a Flate bomb sent through Telegram, /health sampled each second
 *   h. a non-admin's /sethome, then the operator's handoff (issue 20)
 *   i. hostile session imports (issue 20)
 *   k. a parallel DM burst against DAILY_TOKEN_BUDGET   l. host-name SSRF through fetch_url
 *   m. bearer guessing, then the right token          (issue 20: bench/chaos/trust-limits.ts)
 *   n. escape codes in a DM (OSC 52, window title, clear screen) through the real CLI
 *   o. Discord's Gateway (DISCORD_GATEWAY=on): the socket killed mid-reply; wrangler killed
 *      mid-reply (the object restarted); messages sent meanwhile come back by resume
 * b and c run on every platform; g also through the relay intake, replayed to a gateway.
 * Prints lost / doubled / truncated / 5xx / breached per scenario; exits 1 unless all are 0.
 * Every wait is bounded; every process it starts is stopped on exit, error or signal.
 * Run: npm run bench:chaos [-- --rounds 3 --parallel 3 --bodies 300 --only a,b,f,k]
 */
import { appendFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { midDelivery, midTurn, platformErrors } from "./chaos/crash.ts";
import { attachmentBombs } from "./chaos/attachment-bombs.ts";
import { Tally } from "./chaos/harness.ts";
import { gatewayFaults, gatewayRig } from "./chaos/discord-gateway.ts";
import { escapeCodes } from "./chaos/escape-codes.ts";
import { hostileBodies } from "./chaos/hostile.ts";
import { connectorKilled, gatewayKilled, relayedHostile, relayRig, RELAY_ID, RELAY_SECRET, tokenReplay } from "./chaos/relay.ts";
import { sharedResume } from "./chaos/resume.ts";
import { hostileImports, nonAdminSethome } from "./chaos/trust-admin.ts";
import { report } from "./chaos/report.ts";
import { startStack, type Stack } from "./chaos/stack.ts";
import { dmAllowList } from "./chaos/telegram-dm.ts";
import { bearerGuessing, budgetBurst, CHAOS_BUDGET, hostNameSsrf, ssrfRig } from "./chaos/trust-limits.ts";

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "3" },
    parallel: { type: "string", default: "3" },
    bodies: { type: "string", default: "300" },
    only: { type: "string", default: "a,b,c,d,e,f,g,h,i,j,k,l,m,n,o" },
    /** Writes what wrangler and the gateway printed to this file (to see why a count is not zero). */
    log: { type: "string" },
  },
});
const o = { rounds: Number(values.rounds), parallel: Number(values.parallel), bodies: Number(values.bodies) };
for (const [k, v] of Object.entries(o)) {
  if (!Number.isInteger(v) || v < 1) throw new Error(`--${k} must be a whole number of at least 1`);
}
const only = new Set(values.only.split(",").map((x) => x.trim()));
const started = Date.now();
const tallies: Tally[] = [];

/** Runs one scenario with its own tally (the API's 5xx count into it); an error ends it, counted as lost. */
async function scenario(key: string, name: string, s: Stack, run: (t: Tally) => Promise<void>): Promise<void> {
  if (!only.has(key)) return;
  const { api } = s;
  const t0 = Date.now();
  const tally = new Tally(name);
  tallies.push(tally);
  api.tally = tally;
  process.stderr.write(`chaos: ${name}…\n`);
  try {
    await run(tally);
    process.stderr.write(`chaos: ${name}: ${tally.clean ? "clean" : "FOUND SOMETHING"} (${((Date.now() - t0) / 1000).toFixed(0)} s)\n`);
  } catch (err) {
    tally.add("lost", `the scenario stopped: ${err instanceof Error ? err.message : String(err)}`);
    process.stderr.write(`chaos: ${name}: stopped (${err instanceof Error ? err.message : String(err)})\n`);
    // A scenario that stopped between a kill and the restart leaves the next one a Worker.
    if (!s.worker.alive) await s.worker.restart();
  } finally {
    api.tally = null;
  }
}

console.log(`bench/chaos: ${o.rounds} round(s) × ${o.parallel} chat(s) per kill, ${o.bodies} hostile bodies per platform; wrangler dev on loopback`);
if (["a", "b", "c", "f", "g", "h", "i", "j", "n"].some((k) => only.has(k))) {
  const s = await startStack({ TELEGRAM_ALLOWED_USERS: `1001,1002,1003,${dmAllowList()}` });
  try {
    await scenario("a", "a. kill -9 mid-turn", s, (t) => midTurn(s, o, t));
    await scenario("b", "b. kill -9 mid-final-delivery", s, (t) => midDelivery(s, o, t));
    await scenario("c", "c. final edit 500, then 429", s, (t) => platformErrors(s, o, t));
    await scenario("f", "f. shared-chat /resume", s, (t) => sharedResume(s, o, t));
    await scenario("g", "g. signed hostile bodies, at the edge", s, (t) => hostileBodies(s, o, t));
    await scenario("h", "h. non-admin /sethome, then a handoff", s, (t) => nonAdminSethome(s, o, t));
    await scenario("i", "i. hostile imports", s, (t) => hostileImports(s, o, t));
    await scenario("j", "j. attachment bombs (30,000 pages, Flate bomb)", s, (t) => attachmentBombs(s, o, t));
    await scenario("n", "n. escape codes through the CLI", s, (t) => escapeCodes(s, o, t));
  } finally {
    if (values.log) appendFileSync(values.log, `--- edge Worker\n${s.worker.output()}\n`);
    await s.stop();
  }
}
if (["d", "e", "g"].some((k) => only.has(k))) {
  const s = await startStack({ TELEGRAM_ALLOWED_USERS: `1001,${dmAllowList()}`, RELAY_PLATFORMS: "telegram", RELAY_SECRETS: `${RELAY_ID}:${RELAY_SECRET}` });
  const r = await relayRig(s, values.log);
  try {
    await scenario("d", "d. gateway SIGKILLed, restarted", s, (t) => gatewayKilled(r, o, t));
    await scenario("d", "d'. wrangler kill -9 under the gateway", s, (t) => connectorKilled(r, o, t));
    await scenario("e", "e. relay token replayed", s, (t) => tokenReplay(r, o, t));
    await scenario("g", "g. hostile bodies, relayed Telegram", s, (t) => relayedHostile(r, o, t));
  } finally {
    if (values.log) appendFileSync(values.log, `--- relaying Worker\n${s.worker.output()}\n`);
    await r.close();
    await s.stop();
  }
}
if (["k", "l", "m"].some((k) => only.has(k))) {
  const r = await ssrfRig();
  const s = await startStack({
    TELEGRAM_ALLOWED_USERS: `1001,${dmAllowList()}`,
    DAILY_TOKEN_BUDGET: String(CHAOS_BUDGET),
    FETCH_URL_DOH_URL: `${r.doh.url}/dns-query`,
  });
  try {
    await scenario("k", "k. parallel DM burst against the budget", s, (t) => budgetBurst(s, t));
    await scenario("l", "l. host-name SSRF through fetch_url", s, (t) => hostNameSsrf(s, r, t));
    await scenario("m", "m. bearer guessing, then the right token", s, (t) => bearerGuessing(s, t));
  } finally {
    if (values.log) appendFileSync(values.log, `--- budget and SSRF Worker\n${s.worker.output()}\n`);
    await s.stop();
    await r.close();
  }
}
if (only.has("o")) {
  const gw = await gatewayRig();
  const s = await startStack({ DISCORD_GATEWAY: "on" }, { discordGatewayUrl: gw.url });
  try {
    await scenario("o", "o. Discord Gateway: socket killed, object restarted", s, (t) => gatewayFaults(s, gw, o, t));
  } finally {
    if (values.log) appendFileSync(values.log, `--- Discord Gateway Worker\n${s.worker.output()}\n`);
    await s.stop();
    await gw.stop();
  }
}
console.log(report(tallies, Date.now() - started));
process.exitCode = tallies.length > 0 && tallies.every((t) => t.clean) ? 0 : 1;
