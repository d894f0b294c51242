/**
 * The benchmarks' Worker: production's handler and objects, with bench-only behaviour
 * switched on by `BENCH_*` vars (all unset: exactly production):
 * - `BENCH_D1_DELAY_MS` / `BENCH_DO_DELAY_MS`: every D1 and object call delayed (delays.ts);
 * - `BENCH_RELAY_PUSH_URL`: the relay's HTTP-push baseline (push-relay.ts);
 * - `BENCH_HANDOFF_POLL_MS`: the handoff's polling-watcher baseline (polling-handoff.ts);
 * - `BENCH_STATS=1`: storage statements and remote calls counted per side (stats.ts);
 * - `BENCH_NO_INBOX=1`: a message goes from the Worker straight to a new session object, the
 *   one-object ceiling of a new chat (no-inbox.ts).
 * Run by `wrangler dev` with bench/wrangler.bench.toml, which bench/lib.ts writes from
 * wrangler.toml with `main` pointed here. Never deployed.
 */
import worker, { Inbox as ProductionInbox } from "../../workers/index.ts";
import { benchEnv, statsOn } from "./delays.ts";
import { withoutInbox } from "./no-inbox.ts";
import { PollingSessionAgent } from "./polling-handoff.ts";
import { PushRelay } from "./push-relay.ts";
import { countedState, noteEnv, resetStats, statsJson } from "./stats.ts";

function state(ctx: DurableObjectState, env: Env, who: string): DurableObjectState {
  if (!statsOn(env)) return ctx;
  noteEnv(who, env);
  return countedState(ctx, who);
}

export class SessionAgent extends PollingSessionAgent {
  constructor(ctx: DurableObjectState, env: Env) {
    super(state(ctx, env, "SessionAgent"), benchEnv(env, "SessionAgent"));
  }
}

export class Inbox extends ProductionInbox {
  constructor(ctx: DurableObjectState, env: Env) {
    super(state(ctx, env, "Inbox"), benchEnv(env, "Inbox"));
  }
}

export class Relay extends PushRelay {
  constructor(ctx: DurableObjectState, env: Env) {
    super(state(ctx, env, "Relay"), benchEnv(env, "Relay"));
  }
}

/** The console's sign-in throttle and Discord's Gateway holder, as production has them (nothing to measure there). */
export { DiscordGateway, SignInGuard } from "../../workers/index.ts";

export default {
  fetch: (request, env, ctx) => {
    if (statsOn(env)) {
      if (new URL(request.url).pathname === "/__bench/stats") {
        if (request.method === "DELETE") resetStats();
        return Response.json(statsJson());
      }
      noteEnv("Worker", env);
    }
    return worker.fetch(request, withoutInbox(benchEnv(env, "Worker")), ctx);
  },
  scheduled: (controller, env, ctx) => worker.scheduled(controller, benchEnv(env, "Worker"), ctx),
} satisfies ExportedHandler<Env>;
