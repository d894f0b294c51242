/**
 * Scenarios (k), (l), (m) of issue 20, on a Worker with DAILY_TOKEN_BUDGET=2500 and
 * fetch_url's DNS-over-HTTPS pointed at a loopback fake (nothing leaves the machine):
 *   k. a parallel burst against the budget: 20 Telegram DMs from one user at once, and one
 *      Slack user writing in 10 chats at once; each turn reports 1,000 tokens, so at most 3
 *      may start per user (at 0, 1,000 and 2,000 used). More is `breached`.
 *   l. host-name SSRF through the model's fetch_url: local names (localhost, the machine's
 *      host name, single-label, *.local, *.internal, *.localhost) and public-looking names the
 *      fake DNS points at loopback or a mapped address, all at a loopback canary. A hit on
 *      the canary is `breached`.
 *   m. bearer guessing then the right token: 200 wrong tokens at once, then the right one
 *      must be refused (429 with Retry-After) until the wait ends; accepted then.
 */
import { hostname } from "node:os";
import { conversation, textOf } from "../../test/support/fake-llm.ts";
import { sl } from "../../test/support/fixtures.ts";
import { serve, type LoopbackServer } from "../../test/support/http.ts";
import { slackHeaders } from "../../test/support/signing.ts";
import { pause, until, type ListedSession, type Tally } from "./harness.ts";
import type { Stack } from "./stack.ts";
import { all, freshUser, sendDm, untilPosted } from "./telegram-dm.ts";

export const CHAOS_BUDGET = 2_500;
const TURN_TOKENS = { prompt_tokens: 800, completion_tokens: 200 };
/** Turns one user may start under the budget: while used < 2,500 at 1,000 a turn. */
const ALLOWED_TURNS = Math.ceil(CHAOS_BUDGET / 1_000);

/** A loopback DNS-over-HTTPS fake (JSON form) and a canary service fetch_url must never reach. */
export interface SsrfRig {
  doh: LoopbackServer;
  canary: LoopbackServer;
  hits: string[];
  close(): Promise<void>;
}

const FAKE_DNS: Record<string, { A?: string[]; AAAA?: string[] }> = {
  "rebind.chaos.example": { A: ["127.0.0.1"], AAAA: ["::1"] },
  "mapped.chaos.example": { AAAA: ["::ffff:127.0.0.1"] },
  "mixed.chaos.example": { A: ["93.184.216.34", "127.0.0.1"] },
  "ten.chaos.example": { A: ["10.0.0.1"] },
};

export async function ssrfRig(): Promise<SsrfRig> {
  const hits: string[] = [];
  const doh = await serve((req) => {
    const url = new URL(req.url);
    const name = (url.searchParams.get("name") ?? "").toLowerCase();
    const type = url.searchParams.get("type") === "AAAA" ? "AAAA" : "A";
    const known = FAKE_DNS[name];
    if (!known) return Response.json({ Status: 3 });
    return Response.json({ Status: 0, Answer: (known[type] ?? []).map((data) => ({ type: type === "A" ? 1 : 28, data })) });
  });
  const canary = await serve((req) => {
    hits.push(req.url);
    return new Response("canary: fetch_url reached a loopback service", { headers: { "content-type": "text/plain" } });
  });
  return { doh, canary, hits, close: async () => void (await Promise.all([doh.close(), canary.close()])) };
}

/** The user message of a model call (the last one in its conversation). */
function askedIn(body: { messages: Array<{ role: string; content: unknown }> }): string {
  const users = conversation(body as never).filter((m) => m.role === "user");
  return textOf(users.at(-1)?.content as never);
}

export async function budgetBurst(s: Stack, t: Tally): Promise<void> {
  s.reset();
  for (let i = 0; i < 40; i++) s.llm.then({ kind: "text", chunks: [`answer ${i}`], usage: TURN_TOKENS });
  const user = freshUser();
  const channels = Array.from({ length: 10 }, (_, i) => `D9K${String(i).padStart(2, "0")}`);
  await all(60_000, "the burst's webhooks", [
    ...Array.from({ length: 20 }, (_, i) => sendDm(s.api, user, `burst ${i}`)),
    ...channels.map(async (c, i) => {
      const body = JSON.stringify(sl.dm(`many chats ${i}`, "U1002", c));
      const status = await s.api.webhook("slack", body, await slackHeaders(body));
      if (status !== 200) throw new Error(`Slack webhook answered ${status}`);
    }),
  ]);
  t.cases += 30;
  await settled(s, (x) => x.session_key === `agent:main:telegram:dm:${user}` || x.source === "slack");
  const asked = s.llm.calls.map((c) => askedIn(c.body));
  const dmTurns = asked.filter((a) => a.startsWith("burst ")).length;
  const chatTurns = asked.filter((a) => a.startsWith("many chats ")).length;
  if (dmTurns > ALLOWED_TURNS)
    t.add("breached", `20 DMs at once ran ${dmTurns} turns of 1,000 tokens against a ${CHAOS_BUDGET}-token budget (at most ${ALLOWED_TURNS})`);
  if (chatTurns > ALLOWED_TURNS)
    t.add("breached", `one user in 10 chats at once ran ${chatTurns} turns of 1,000 tokens against a ${CHAOS_BUDGET}-token budget (at most ${ALLOWED_TURNS})`);
  if (dmTurns === 0) t.add("lost", "no turn of the DM burst ran at all");
  const said = s.telegram.messages(user).map((m) => m.plain);
  const slow = said.filter((m) => m.startsWith("Slow down:")).length;
  if (slow > 1) t.add("doubled", `the slow-down notice was said ${slow} times`);
  const told = said.filter((m) => m.startsWith("You have used today's allowance")).length;
  t.info.push(`k: 20 DMs at once: ${dmTurns} turn(s) ran, ${slow} slow-down and ${told} budget notice(s); one user in 10 chats: ${chatTurns} turn(s) ran`);
}

/**
 * Waits (bounded) until the sessions `mine` picks have no turn running and nothing new
 * reached the model or the platforms for 5 s: a turn still to start would show by then.
 */
async function settled(s: Stack, mine: (x: ListedSession & { running?: boolean }) => boolean): Promise<void> {
  let calls = -1;
  let since = Date.now();
  await until(
    120_000,
    "the burst's turns to end",
    async () => {
      const { sessions } = await s.api.json<{ sessions: Array<ListedSession & { running?: boolean }> }>("/v1/sessions?limit=200");
      const n = s.llm.calls.length + s.telegram.calls.length + s.slack.calls.length;
      if (n !== calls) [calls, since] = [n, Date.now()];
      return sessions.filter(mine).some((x) => x.running) || Date.now() - since < 5_000 ? undefined : true;
    },
    250,
  );
}

export async function hostNameSsrf(s: Stack, r: SsrfRig, t: Tally): Promise<void> {
  s.reset();
  const port = new URL(r.canary.url).port;
  const names = [
    "localhost",
    hostname(),
    "canary",
    "canary.local",
    "metadata.internal",
    "app.localhost",
    "rebind.chaos.example",
    "mapped.chaos.example",
    "mixed.chaos.example",
    "ten.chaos.example",
  ];
  for (const [i, name] of names.entries()) {
    const user = freshUser();
    const id = `ssrf-${i}`;
    s.llm.then(
      { kind: "tools", calls: [{ id, name: "fetch_url", arguments: JSON.stringify({ url: `http://${name}:${port}/secret` }) }] },
      { kind: "text", chunks: [`done ${i}`] },
    );
    await sendDm(s.api, user, `fetch the page on ${name}`);
    await untilPosted(s.telegram, user, `done ${i}`, 60_000);
    t.cases++;
    const result = s.llm.calls.flatMap((c) => c.body.messages).find((m) => m.role === "tool" && m.tool_call_id === id);
    const text = textOf(result?.content ?? null);
    if (!result) t.add("lost", `${name}: the tool's answer never reached the model`);
    else if (!/refusing to fetch|cannot resolve/.test(text)) t.add("breached", `${name}: fetch_url answered ${text.slice(0, 120)}`);
  }
  if (r.hits.length > 0) t.add("breached", `the loopback canary was reached ${r.hits.length} time(s): ${r.hits.slice(0, 3).join(", ")}`);
  t.info.push(`l: ${names.length} host names at a loopback canary: ${r.hits.length} hit(s)`);
}

export async function bearerGuessing(s: Stack, t: Tally): Promise<void> {
  const get = (token: string) => s.api.fetch("/v1/sessions?limit=1", { headers: { authorization: `Bearer ${token}` } });
  const statuses = await all(
    60_000,
    "200 guesses",
    Array.from({ length: 200 }, (_, i) => get(`guess-${i}`).then(async (res) => (await res.arrayBuffer(), res.status))),
  );
  t.cases += 200;
  const refused = statuses.filter((x) => x === 401).length;
  const held = statuses.filter((x) => x === 429).length;
  const other = statuses.filter((x) => x !== 401 && x !== 429);
  if (other.length > 0) t.add("breached", `a wrong token was answered ${[...new Set(other)].join(", ")}`);
  if (held === 0) t.add("breached", "200 wrong tokens at once: none was throttled (no 429)");
  // The burst may outlast its waits: one more wrong guess that is judged (401) starts a new
  // wait of seconds, and the right token sent at once must be refused within it.
  for (let i = 0; ; i++) {
    const res = await get(`late-guess-${i}`);
    await res.arrayBuffer();
    if (res.status === 401) break;
    if (res.status !== 429 || i > 50) throw new Error(`a late guess answered ${res.status}`);
    await pause(Number(res.headers.get("retry-after") || 1) * 1000);
  }
  const right = await get(s.api.token);
  const wait = Number(right.headers.get("retry-after"));
  await right.arrayBuffer();
  if (right.status !== 429) t.add("breached", `the right token right after a judged guess answered ${right.status}, not 429`);
  // After the wait it works again (and the next scenarios' API calls are not held up).
  await pause((Number.isFinite(wait) && wait > 0 ? wait : 1) * 1000 + 200);
  const after = await get(s.api.token);
  await after.arrayBuffer();
  if (after.status !== 200) t.add("lost", `the right token after the wait answered ${after.status}`);
  t.info.push(
    `m: 200 wrong tokens: ${refused} judged (401), ${held} throttled (429); the right token then ${right.status} (Retry-After ${wait} s), after the wait ${after.status}`,
  );
}
