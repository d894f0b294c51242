/**
 * (p) Signal bridged: the real `hermes-edge gateway --bridge signal` against a loopback fake
 * signal-cli and the real `wrangler dev`, the gateway SIGKILLed while replies stream and while
 * Signal delivers more, then restarted on the same --db. Every message is answered once, in
 * order, each reply's last edit naming the timestamp its message last got, nothing sent twice.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { tmpdir } from "node:os";
import path from "node:path";
import { FakeSignalCli, type RpcCall } from "../../test/support/fake-signal-cli.ts";
import { serve } from "../../test/support/http.ts";
import { sig } from "../../test/support/signal-fixtures.ts";
import { startGateway } from "./gateway.ts";
import { onCleanup, until, type Tally } from "./harness.ts";
import type { Stack } from "./stack.ts";

export const SIGNAL_ID = "signalbox";
export const SIGNAL_SECRET = "chaos-signal-secret";
const ACCOUNT = "+15550009999";

let users = 0;
const freshUuid = () => `5c000000-0000-4000-8000-${String(++users).padStart(12, "0")}`;

/** The Worker settings of the Signal scenario: Signal bridged by gateway `signalbox`, everyone allowed. */
export const SIGNAL_VARS = { RELAY_SECRETS: `${SIGNAL_ID}:${SIGNAL_SECRET}`, BRIDGE_PLATFORMS: `signal:${SIGNAL_ID}`, SIGNAL_ALLOWED_USERS: "*" };

/** Received items the gateway holds that the Worker has not acknowledged (its SQLite file, read-only). */
function unacked(file: string): number {
  if (!existsSync(file)) return -1;
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    return Number((db.prepare("SELECT COUNT(*) AS n FROM bridge_inbound").get() as { n: number } | undefined)?.n ?? -1);
  } catch {
    return -1;
  } finally {
    db.close();
  }
}

const to = (c: RpcCall) => (c.params.recipient as string[] | undefined)?.[0];

export async function signalBridgeKilled(s: Stack, o: { rounds: number; parallel: number }, tally: Tally): Promise<void> {
  const daemon = new FakeSignalCli(ACCOUNT);
  const server = await serve((r) => daemon.handle(r));
  const dir = mkdtempSync(path.join(tmpdir(), "hermes-chaos-signal-"));
  const forget = onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  const db = path.join(dir, "gateway.db");
  const gateway = () =>
    startGateway({
      relayUrl: s.worker.url,
      gatewayId: SIGNAL_ID,
      secret: SIGNAL_SECRET,
      llmUrl: s.llmUrl,
      db,
      args: ["--bridge", "signal"],
      env: { SIGNAL_CLI_URL: server.url, SIGNAL_ACCOUNT: ACCOUNT },
    });
  try {
    for (let round = 0; round < o.rounds; round++) {
      s.reset();
      daemon.reset();
      let gw = gateway();
      await gw.waitFor("relay: connected");
      await until(30_000, "p: the gateway following signal-cli", () => daemon.streams > 0 || undefined);
      const chats = Array.from({ length: o.parallel }, (_, i) => ({ user: freshUuid(), texts: [0, 1, 2].map((n) => `chaos o ${round}.${i} message ${n}`) }));
      const gates = chats.map(() => s.llm.hold(["thinking "], ["and the rest"], 180_000));
      // First and second messages: the first turns stream and are held, the second ones wait behind them at the edge.
      for (const c of chats) daemon.deliver(sig.dm(c.user, c.texts[0]!));
      for (const c of chats) daemon.deliver(sig.dm(c.user, c.texts[1]!));
      await until(60_000, "p: every first reply streaming", () => chats.every((c) => daemon.sends().some((x) => to(x) === c.user)) || undefined);
      // Killed once the edge has acknowledged all it was sent: an item signal-cli is still writing
      // to the event stream when the gateway dies is lost (docs/platforms/signal.md), not counted here.
      await until(30_000, "p: every received item acknowledged", () => unacked(db) === 0 || undefined);
      await gw.kill9();
      // signal-cli notices the dead stream (and, with --receive-mode on-connection, stops receiving): what
      // Signal delivers from then on waits. One delivered before it noticed would be written to the dead stream.
      await until(30_000, "p: signal-cli noticing the dead stream", () => daemon.streams === 0 || undefined);
      // The turns end while the gateway is dead: their edits wait at the edge. Signal delivers more: it waits in signal-cli.
      for (const g of gates) g.release();
      for (const c of chats) daemon.deliver(sig.dm(c.user, c.texts[2]!));
      gw = gateway();
      await gw.waitFor("relay: connected");
      const expected = (c: (typeof chats)[number]) => ["thinking and the rest", `echo: ${c.texts[1]}`, `echo: ${c.texts[2]}`];
      const shown = (user: string) => {
        // What each message finally shows: a send makes one, an edit replaces the one it names.
        const byTs = new Map<number, string>();
        const order: number[] = [];
        for (const x of daemon.sends().filter((y) => to(y) === user)) {
          const edit = x.params.editTimestamp as number | undefined;
          const ts = x.result?.timestamp ?? 0;
          const first = edit === undefined ? ts : [...byTs.entries()].find(([k]) => k === edit)?.[0];
          if (edit === undefined) order.push(ts);
          else if (first !== undefined) {
            const at = order.indexOf(first);
            order[at] = ts;
            byTs.delete(first);
          }
          byTs.set(ts, String(x.params.message));
        }
        return order.map((ts) => byTs.get(ts) ?? "");
      };
      try {
        await until(
          120_000,
          "p: every message answered",
          () => chats.every((c) => shown(c.user).length >= 3 && shown(c.user)[0] === expected(c)[0]) || undefined,
        );
      } catch {
        // Counted below.
      }
      for (const c of chats) {
        const got = shown(c.user);
        const want = expected(c);
        for (const w of want) if (!got.includes(w)) tally.add("lost", `${c.user}: no "${w}" (shown: ${JSON.stringify(got)})`);
        for (const w of want) if (got.filter((g) => g === w).length > 1) tally.add("doubled", `${c.user}: "${w}" shown twice`);
        const at = want.map((w) => got.indexOf(w)).filter((i) => i >= 0);
        if (at.some((v, i) => i > 0 && v < (at[i - 1] ?? 0))) tally.add("lost", `${c.user}: answers out of order: ${JSON.stringify(got)}`);
      }
      const code = await gw.stop();
      if (code !== 0) tally.add("lost", `the restarted gateway exited ${code} on SIGTERM`);
      tally.info.push(`round ${round}: ${daemon.sends().length} signal-cli sends for ${chats.length * 3} messages`);
    }
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
    forget();
  }
}
