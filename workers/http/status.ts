import { Hono } from "hono";
import { workerStatus } from "../conversations/status.ts";

/** `GET /v1/status`: the Worker's setup checked from the inside (see `hermes-edge status`). */
export const statusRoutes = new Hono<{ Bindings: Env }>().get("/", async (c) => c.json(await workerStatus(c.env, new URL(c.req.url).origin, Date.now())));
