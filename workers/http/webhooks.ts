import { Hono } from "hono";
import { handleHandshake } from "../conversations/batch.ts";
import { handleWebhook } from "../conversations/intake.ts";

/** `POST /webhooks/:platform`: platform deliveries; `GET`: a platform's subscription check (WhatsApp). */
export const webhookRoutes = new Hono<{ Bindings: Env }>()
  .post("/:platform", (c) => handleWebhook(c, c.req.param("platform")))
  .get("/:platform", (c) => handleHandshake(c, c.req.param("platform")));
