import { app } from "./app.ts";
import { runMaintenance } from "./maintenance.ts";

export { HandoffScheduler } from "../durable-objects/handoff-scheduler.ts";
export { Relay } from "../durable-objects/relay.ts";
export { SessionAgent } from "../durable-objects/session-agent.ts";

export default {
  fetch: app.fetch,
  async scheduled(controller, env, ctx) {
    ctx.waitUntil(runMaintenance(env, controller.scheduledTime));
  },
} satisfies ExportedHandler<Env>;
