/**
 * The relay benchmark's baseline, the superseded design: the connector POSTs each inbound
 * frame to an HTTP endpoint on the gateway (`BENCH_RELAY_PUSH_URL`) instead of sending it
 * down the gateway's WebSocket. The frame is stored first, as the real `deliver` does.
 */
import { Relay } from "../../workers/index.ts";
import { encodeFrame } from "../../workers/relay/frames.ts";
import type { BenchVars } from "./delays.ts";

type DeliverInput = Parameters<Relay["deliver"]>[0];

/** A Relay that also pushes every inbound frame over HTTP when `BENCH_RELAY_PUSH_URL` is set. */
export class PushRelay extends Relay {
  override async deliver(input: DeliverInput): Promise<{ accepted: boolean; live: boolean }> {
    const taken = await super.deliver(input);
    const url = (this.env as Env & BenchVars).BENCH_RELAY_PUSH_URL;
    if (!url || !taken.accepted) return taken;
    const frame = encodeFrame({ type: "inbound", event: input.event, bufferId: crypto.randomUUID() });
    try {
      const res = await fetch(url, { method: "POST", headers: { "content-type": "application/x-ndjson" }, body: frame, signal: AbortSignal.timeout(10_000) });
      await res.body?.cancel();
      return { accepted: true, live: res.ok };
    } catch {
      return taken;
    }
  }
}
