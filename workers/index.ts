import { app } from "./app.ts";
import { ensureConnection } from "./conversations/connections.ts";
import { logger } from "./log/index.ts";
import { runMaintenance } from "./maintenance.ts";

export { DiscordGateway } from "../durable-objects/discord-gateway/index.ts";
export { Inbox } from "../durable-objects/inbox/index.ts";
export { Relay } from "../durable-objects/relay/index.ts";
export { SessionAgent } from "../durable-objects/session-agent/index.ts";
export { SignInGuard } from "../durable-objects/sign-in/index.ts";

/** Whether this isolate has woken the Gateway object yet (once per isolate: a deploy reconnects it without waiting for the cron). */
let connectionWoken = false;

export default {
  fetch(request: Request, env: Env, ctx: ExecutionContext) {
    if (!connectionWoken) {
      connectionWoken = true;
      ctx.waitUntil(ensureConnection(env).catch((err: unknown) => logger.error("the Gateway object could not be reached", { err })));
    }
    return app.fetch(request, env, ctx);
  },
  async scheduled(controller, env, ctx) {
    ctx.waitUntil(runMaintenance(env, controller.scheduledTime));
  },
} satisfies ExportedHandler<Env>;
