import { createExecutionContext } from "cloudflare:test";
import { env as runtimeEnv, exports } from "cloudflare:workers";
import worker from "../../workers/index.ts";
import { notingEnv } from "./reached.ts";
import { relayEnv } from "./relay-config.ts";

/**
 * Which configuration of the Worker the running suites talk to: the default one (the runtime's
 * own env) or the relay configuration (test/worker/relay-config.ts), which the relay suites
 * switch on around themselves (test/worker/all.test.ts). The helpers reach the Worker, its
 * objects and its storage through this module, so the same helper serves both.
 */
let relay = false;

export function useRelayConfig(on: boolean): void {
  relay = on;
}

/** The env of the configuration in use: the object to hand the Worker's handlers. */
export function configEnv(): Env {
  return relay ? relayEnv(runtimeEnv) : runtimeEnv;
}

/** configEnv() noting the objects got through it (test/worker/reached.ts): the env to call the Worker's handlers with. */
export function workerEnv(): Env {
  return notingEnv(configEnv());
}

/** The bindings of the configuration in use (`env.DB`, `env.RELAY`, …), read when used. */
export const env: Env = new Proxy({} as Env, { get: (_target, key) => Reflect.get(configEnv(), key) as unknown });

/**
 * A request to the Worker, as `exports.default.fetch` makes one: through the runtime for the
 * default configuration, to the Worker's handler with the relay configuration's env otherwise
 * (work it leaves in waitUntil goes on, as in the runtime).
 */
export function selfFetch(input: string | URL, init?: RequestInit): Promise<Response> {
  if (!relay) return exports.default.fetch(input, init);
  return Promise.resolve(worker.fetch(new Request(input, init), workerEnv(), createExecutionContext()));
}
