import { app } from "./app.ts";
import { runMaintenance } from "./maintenance.ts";

export { DiscordGateway } from "../durable-objects/discord-gateway/index.ts";
export { Inbox } from "../durable-objects/inbox/index.ts";
export { Relay } from "../durable-objects/relay/index.ts";
export { SessionAgent } from "../durable-objects/session-agent/index.ts";
export { SignInGuard } from "../durable-objects/sign-in/index.ts";

export default {
  fetch: app.fetch,
  async scheduled(controller, env, ctx) {
    ctx.waitUntil(runMaintenance(env, controller.scheduledTime));
  },
} satisfies ExportedHandler<Env>;
