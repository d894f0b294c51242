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

// A mixin's base constructor must take any arguments (TypeScript's rule for mixins).
type ObjectClass = new (...args: any[]) => object;

/** `Base`, its objects constructed with `envOf` of the env the runtime gives them. */
function constructedWith<C extends ObjectClass>(Base: C, envOf: (env: Env) => Env): C {
  return class extends Base {
    constructor(...args: any[]) {
      super(args[0] as DurableObjectState, envOf(args[1] as Env));
    }
  };
}

const relayNoting = (env: Env) => notingEnv(relayEnv(env));

export const SessionAgent = constructedWith(WorkerSessionAgent, notingEnv);
export const Inbox = constructedWith(WorkerInbox, notingEnv);
export const Relay = constructedWith(WorkerRelay, notingEnv);
export const SignInGuard = constructedWith(WorkerSignInGuard, notingEnv);
export const DiscordGateway = constructedWith(WorkerDiscordGateway, notingEnv);
export const RelayConfigSessionAgent = constructedWith(WorkerSessionAgent, relayNoting);
export const RelayConfigInbox = constructedWith(WorkerInbox, relayNoting);
export const RelayConfigRelay = constructedWith(WorkerRelay, relayNoting);
export const RelayConfigSignInGuard = constructedWith(WorkerSignInGuard, relayNoting);
export const RelayConfigDiscordGateway = constructedWith(WorkerDiscordGateway, relayNoting);
