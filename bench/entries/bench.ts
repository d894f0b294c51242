/**
 * The benchmarks' Worker: production's handler and objects, with bench-only behaviour
 * switched on by `BENCH_*` vars (all unset: exactly production):
 * - `BENCH_D1_DELAY_MS` / `BENCH_DO_DELAY_MS`: every D1 and object call delayed (delays.ts);
 * - `BENCH_RELAY_PUSH_URL`: the relay's HTTP-push baseline (push-relay.ts);
 * - `BENCH_HANDOFF_POLL_MS`: the handoff's polling-watcher baseline (polling-handoff.ts).
 * Run by `wrangler dev` with bench/wrangler.bench.toml, which bench/lib.ts writes from
 * wrangler.toml with `main` pointed here. Never deployed.
 */
import worker, { Inbox as ProductionInbox } from "../../workers/index.ts";
import { delayedEnv } from "./delays.ts";
import { PollingSessionAgent } from "./polling-handoff.ts";
import { PushRelay } from "./push-relay.ts";

export class SessionAgent extends PollingSessionAgent {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, delayedEnv(env));
  }
}

export class Inbox extends ProductionInbox {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, delayedEnv(env));
  }
}

export class Relay extends PushRelay {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, delayedEnv(env));
  }
}

export default {
  fetch: (request, env, ctx) => worker.fetch(request, delayedEnv(env), ctx),
  scheduled: (controller, env, ctx) => worker.scheduled(controller, delayedEnv(env), ctx),
} satisfies ExportedHandler<Env>;
