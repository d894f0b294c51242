/**
 * The workerd test project's main module: the Worker (workers/index.ts) and its Durable Object
 * classes, each given its env through notingEnv() (test/worker/reached.ts: settle() waits on
 * what was reached), and the classes once more for the relay configuration
 * (test/worker/relay-config.ts), constructed with that configuration's env. Test-only:
 * wrangler.toml's main is the Worker.
 */
import worker, {
  DiscordGateway as WorkerDiscordGateway,
  Inbox as WorkerInbox,
  Relay as WorkerRelay,
  SessionAgent as WorkerSessionAgent,
  SignInGuard as WorkerSignInGuard,
} from "../../workers/index.ts";
import { notingEnv } from "./reached.ts";
import { relayEnv } from "./relay-config.ts";

export default {
  fetch: (request: Request, env: Env, ctx: ExecutionContext) => worker.fetch(request, notingEnv(env), ctx),
  scheduled: (controller: ScheduledController, env: Env, ctx: ExecutionContext) => worker.scheduled(controller, notingEnv(env), ctx),
} satisfies ExportedHandler<Env>;

export class SessionAgent extends WorkerSessionAgent {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, notingEnv(env));
  }
}

export class Inbox extends WorkerInbox {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, notingEnv(env));
  }
}

export class Relay extends WorkerRelay {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, notingEnv(env));
  }
}

export class SignInGuard extends WorkerSignInGuard {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, notingEnv(env));
  }
}

export class DiscordGateway extends WorkerDiscordGateway {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, notingEnv(env));
  }
}

export class RelayConfigSessionAgent extends WorkerSessionAgent {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, notingEnv(relayEnv(env)));
  }
}

export class RelayConfigInbox extends WorkerInbox {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, notingEnv(relayEnv(env)));
  }
}

export class RelayConfigRelay extends WorkerRelay {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, notingEnv(relayEnv(env)));
  }
}

export class RelayConfigSignInGuard extends WorkerSignInGuard {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, notingEnv(relayEnv(env)));
  }
}

export class RelayConfigDiscordGateway extends WorkerDiscordGateway {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, notingEnv(relayEnv(env)));
  }
}
