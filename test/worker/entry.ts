/**
 * The workerd test projects' main module: the Worker (workers/index.ts) as deployed, plus its
 * Durable Object classes once more for the relay configuration (test/worker/relay-config.ts),
 * each constructed with that configuration's env. Test-only: wrangler.toml's main is the Worker.
 */
import { DiscordGateway, Inbox, Relay, SessionAgent, SignInGuard } from "../../workers/index.ts";
import { relayEnv } from "./relay-config.ts";

export { DiscordGateway, Inbox, Relay, SessionAgent, SignInGuard } from "../../workers/index.ts";
export { default } from "../../workers/index.ts";

export class RelayConfigSessionAgent extends SessionAgent {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, relayEnv(env));
  }
}

export class RelayConfigInbox extends Inbox {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, relayEnv(env));
  }
}

export class RelayConfigRelay extends Relay {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, relayEnv(env));
  }
}

export class RelayConfigSignInGuard extends SignInGuard {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, relayEnv(env));
  }
}

export class RelayConfigDiscordGateway extends DiscordGateway {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, relayEnv(env));
  }
}
