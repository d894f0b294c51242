import { Hono } from "hono";
import { handleWebhook } from "../conversations/intake.ts";

/** `POST /webhooks/:platform`: Telegram, Discord and Slack deliveries. */
export const webhookRoutes = new Hono<{ Bindings: Env }>().post("/:platform", (c) => handleWebhook(c, c.req.param("platform")));
