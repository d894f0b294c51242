/**
 * The handoff benchmark's baseline, the original design: a watcher polled for pending
 * handoffs every `BENCH_HANDOFF_POLL_MS` (2 s), so a request waited for its next tick
 * before it was claimed. Here the session object answers the request at once and takes it
 * (stores and claims it) on the next tick of such a clock. The request is not checked
 * before then: the benchmark only asks for handoffs that are allowed.
 */
import { SessionAgent } from "../../workers/index.ts";
import { benchMs, type BenchVars } from "./delays.ts";

type Request = Parameters<SessionAgent["requestHandoff"]>[0];

/** A SessionAgent whose handoff claims wait for the next tick of a polling watcher. */
export class PollingSessionAgent extends SessionAgent {
  override async requestHandoff(req: Request): ReturnType<SessionAgent["requestHandoff"]> {
    const every = benchMs((this.env as Env & BenchVars).BENCH_HANDOFF_POLL_MS);
    if (!every) return super.requestHandoff(req);
    const now = Date.now();
    const tick = Math.ceil((now + 1) / every) * every;
    setTimeout(() => void super.requestHandoff(req).catch(() => undefined), tick - now);
    return { ok: true, to: `${req.platform} (checked at the next tick)` };
  }
}
