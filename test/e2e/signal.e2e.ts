import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { relayHarness, SIGNAL_E2E, startGateway, type Harness } from "../support/e2e.ts";
import { watchGateway } from "../support/gateway-hooks.ts";
import { FakeSignalCli, type RpcCall } from "../support/fake-signal-cli.ts";
import { serve, type LoopbackServer } from "../support/http.ts";
import { SIGNAL_TEST, sig } from "../support/signal-fixtures.ts";
import { tempDir } from "../support/temp.ts";

/**
 * Signal bridged end to end: the fake signal-cli daemon on loopback, the real
 * `hermes-edge gateway --bridge signal` process following it, and the relaying e2e Worker
 * Worker running the turns (BRIDGE_PLATFORMS=signal:signalbox). A message is answered at the
 * edge, /stop stops a turn, a CLI session is handed off into Signal, and replies made while
 * the gateway is dead wait at the edge until it is back.
 */
let h: Harness & { llmUrl: string };
let daemon: FakeSignalCli;
let server: LoopbackServer;
let dir: string;
const [alice, bob] = SIGNAL_E2E.users;

beforeAll(async () => {
  h = await relayHarness();
  h.reset();
  daemon = new FakeSignalCli(SIGNAL_TEST.account, SIGNAL_TEST.botUuid);
  server = await serve((r) => daemon.handle(r));
  dir = tempDir("hermes-signal-e2e-");
});

afterAll(async () => {
  await server.close();
});

function gateway() {
  const gw = startGateway(["--bridge", "signal", "--db", path.join(dir, "gw.db")], {
    GATEWAY_RELAY_URL: h.worker.url,
    GATEWAY_RELAY_ID: SIGNAL_E2E.gatewayId,
    GATEWAY_RELAY_SECRET: SIGNAL_E2E.secret,
    SIGNAL_CLI_URL: server.url,
    SIGNAL_ACCOUNT: SIGNAL_TEST.account,
  });
  return watchGateway(gw, "the Signal bridge");
}

const sendTo = (user: string, pred: (message: string) => boolean) => (c: RpcCall) =>
  c.method === "send" && (c.params.recipient as string[] | undefined)?.[0] === user && pred(String(c.params.message));
const found = async (pred: (c: RpcCall) => boolean): Promise<RpcCall> => {
  await daemon.waitFor(() => daemon.calls.some(pred));
  return daemon.calls.find(pred)!;
};

async function api(pathname: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${h.worker.url}${pathname}`, { ...init, headers: { authorization: `Bearer ${h.worker.token}`, ...(init.headers ?? {}) } });
}

describe("Signal bridged end to end", () => {
  it("answers a Signal message at the edge, stops a turn on /stop, hands a CLI session into Signal, and keeps replies for a gateway that died", async () => {
    const gw = gateway();
    await gw.waitFor("relay: connected");
    await daemon.waitFor(() => daemon.streams === 1);

    // A message in → a turn at the edge → the reply out through the bridge.
    daemon.deliver(sig.dm(alice, "hello from signal"));
    await found(sendTo(alice, (m) => m === "echo: hello from signal"));

    // /stop stops the turn the edge runs for this chat.
    const held = h.llm.hold(["thinking "], ["never"]);
    daemon.deliver(sig.dm(bob, "a long one"));
    await found(sendTo(bob, (m) => m.startsWith("thinking")));
    daemon.deliver(sig.dm(bob, "/stop"));
    await found((c) => c.method === "send" && (c.params.recipient as string[] | undefined)?.[0] === bob && String(c.params.message).includes("Stopped"));
    held.release();

    // A handoff into Signal: the admin makes their chat the home, a CLI session moves there.
    daemon.deliver(sig.dm(alice, "/sethome"));
    await found(sendTo(alice, (m) => /home channel/i.test(m)));
    const { session } = (await (await api("/v1/sessions", { method: "POST", body: JSON.stringify({ title: "trip to Lisbon" }) })).json()) as {
      session: { id: string };
    };
    expect((await api(`/v1/sessions/${session.id}/handoff`, { method: "POST", body: JSON.stringify({ platform: "signal" }) })).status).toBe(202);
    const done = (await (await api(`/v1/sessions/${session.id}/handoff?wait=30&state=pending`)).json()) as { handoff: { state: string } };
    const final =
      done.handoff.state === "running" ? ((await (await api(`/v1/sessions/${session.id}/handoff?wait=30&state=running`)).json()) as typeof done) : done;
    expect(final.handoff).toMatchObject({ state: "completed", platform: "signal", destination: { chat_id: alice } });
    const sendsToAlice = daemon.sends().filter(sendTo(alice, () => true)).length;
    daemon.deliver(sig.dm(alice, "continue here"));
    await found(sendTo(alice, (m) => m === "echo: continue here"));
    expect(daemon.sends().filter(sendTo(alice, () => true)).length).toBeGreaterThan(sendsToAlice);

    // The gateway dies mid-reply: the rest of the reply waits at the edge, and what Signal
    // delivers meanwhile waits in signal-cli; both go through once it is back.
    const gate = h.llm.hold(["first part, "], ["then the rest"]);
    daemon.deliver(sig.dm(bob, "tell me slowly"));
    const preview = await found(sendTo(bob, (m) => m.startsWith("first part")));
    gw.child.kill("SIGKILL");
    await gw.exit;
    // Once signal-cli has seen the stream go (on-connection receiving stops), what Signal delivers waits there.
    await daemon.waitFor(() => daemon.streams === 0);
    gate.release();
    daemon.deliver(sig.dm(alice, "while the gateway was down"));
    expect(daemon.queued).toHaveLength(1);
    const again = gateway();
    await again.waitFor("relay: connected");
    const edit = await found((c) => sendTo(bob, (m) => m === "first part, then the rest")(c) && c.params.editTimestamp !== undefined);
    // The edit names the timestamp signal-cli gave the last send or edit of that message: the Relay kept it across the restart.
    const before = daemon
      .sends()
      .slice(daemon.sends().indexOf(preview), daemon.sends().indexOf(edit))
      .filter(sendTo(bob, () => true));
    expect(edit.params.editTimestamp).toBe(before.at(-1)?.result?.timestamp);
    await found(sendTo(alice, (m) => m === "echo: while the gateway was down"));
    again.child.kill("SIGTERM");
    expect(await again.exit).toBe(0);
  });
});
