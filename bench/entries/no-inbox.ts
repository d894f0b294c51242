/**
 * `BENCH_NO_INBOX=1`: the one-object ceiling of issue 27's goal 4. The Worker's `INBOX`
 * binding is replaced by one whose `take` of a message hands it straight to a new session
 * object (a fresh id and the seed its Inbox would give, as `Inbox.#message` does) and answers
 * "accepted" once that object has stored it; every other call goes to the real Inbox. So a
 * new chat makes one object instead of two, with no Inbox storage, alarm, hand-on or route
 * copy: what any design with one object per new chat could at best cost the dev server's
 * thread. Not a product: no ordering, no redelivery check, no binding (each message is a
 * session of its own). bench:webhooks `--ceiling` runs new chats through it.
 */
import { seedFor } from "../../workers/conversations/sessions.ts";
import { newSessionId } from "../../workers/db/ids.ts";
import type { PlatformEvent } from "../../workers/platforms/types.ts";
import type { BenchVars } from "./delays.ts";

/** Is `BENCH_NO_INBOX` on? */
const noInboxOn = (env: object) => (env as BenchVars).BENCH_NO_INBOX === "1";

/** `env` with `INBOX` replaced as above when `BENCH_NO_INBOX=1`; production's env otherwise. */
export function withoutInbox(env: Env): Env {
  if (!noInboxOn(env)) return env;
  const real = env.INBOX;
  const INBOX = new Proxy(real, {
    get(target, prop) {
      if (prop !== "getByName") return Reflect.get(target, prop);
      return (key: string) => {
        const stub = target.getByName(key);
        return new Proxy(stub, {
          get(s, method) {
            if (method !== "take") return Reflect.get(s, method);
            return async (event: PlatformEvent) => {
              if (event.kind !== "message") return s.take(event);
              await env.SESSION_AGENT.getByName(newSessionId(Date.now())).enqueue({
                content: event.text,
                target: event.target,
                deliveryKey: `${event.source.platform}:${event.deliveryId}`,
                seed: seedFor(env, event.source, key),
                meta: { userKey: `${event.source.platform}:${event.source.userId}` },
              });
              return "accepted";
            };
          },
        });
      };
    },
  });
  return { ...env, INBOX };
}
