import { Hono } from "hono";
import { z } from "zod";
import { isPlatformName } from "../config.ts";
import { db } from "../db/client.ts";
import { getHandoffRow } from "../db/handoff.ts";
import { handoffJson } from "../db/sessions.ts";
import { platformSettings } from "../platforms/registry.ts";
import { isRelayed } from "../relay/config.ts";
import { ApiError, notFound } from "./errors.ts";
import { homeChannel } from "./platforms.ts";
import { sessionAgent } from "./sessions.ts";
import { jsonBody } from "./validate.ts";

const HandoffInput = z.object({
  platform: z.string().trim().min(1).max(40),
  chat_id: z.string().trim().min(1).max(200).optional(),
  thread: z.boolean().optional(),
});

const WaitQuery = z.object({
  wait: z.coerce.number().min(0).max(30).default(0),
  state: z.enum(["none", "pending", "running", "completed", "failed"]).optional(),
});

const CancelInput = z.object({ reason: z.string().trim().min(1).max(500).optional() });

/** `/v1/sessions/:id/handoff`: request, watch (long-poll) and give up on a handoff. */
export const handoffRoutes = new Hono<{ Bindings: Env }>()
  .post("/:id/handoff", async (c) => {
    const id = c.req.param("id");
    const body = await jsonBody(c, HandoffInput);
    if (!(await getHandoffRow(db(c.env), id))) throw notFound(`session ${id}`);
    const platform = body.platform.toLowerCase();
    if (!isPlatformName(platform)) throw new ApiError(400, "unknown_platform", `unknown platform '${body.platform}' (telegram, discord, slack)`);
    const settings = platformSettings(c.env, platform);
    if (!settings.enabled) throw new ApiError(422, "platform_not_configured", `${platform} is not configured on this Worker (set ${settings.missing.join(", ")})`);
    if (isRelayed(c.env, platform)) throw new ApiError(422, "platform_not_configured", `${platform} turns run on a relay gateway, which keeps its own transcripts; hand off to a platform the Worker serves`);
    if (!body.chat_id && !(await homeChannel(c.env, platform))) {
      throw new ApiError(422, "no_home_channel", `${platform} has no home channel: run /sethome in the destination chat, or pass chat_id`);
    }
    const result = await sessionAgent(c.env, id).requestHandoff(id, { platform, chatId: body.chat_id ?? null, thread: body.thread ?? true });
    if (!result.ok && result.code === "not_found") throw notFound(`session ${id}`);
    if (!result.ok && result.code === "turn_in_progress") throw new ApiError(409, "turn_in_progress", "the agent is busy: a turn is running in this session");
    if (!result.ok) throw new ApiError(409, "handoff_in_flight", "a handoff of this session is already pending or running");
    return c.json({ handoff: { state: "pending", platform } }, 202);
  })
  .get("/:id/handoff", async (c) => {
    const id = c.req.param("id");
    const q = WaitQuery.safeParse(c.req.query());
    if (!q.success) throw new ApiError(400, "bad_request", q.error.issues[0]?.message ?? "bad query");
    if (q.data.wait === 0 || q.data.state === undefined) {
      const row = await getHandoffRow(db(c.env), id);
      if (!row) throw notFound(`session ${id}`);
      return c.json({ handoff: handoffJson(row) });
    }
    const state = q.data.state === "none" ? null : q.data.state;
    const { found, handoff } = await sessionAgent(c.env, id).waitHandoff(id, state, q.data.wait * 1000);
    if (!found) throw notFound(`session ${id}`);
    return c.json({ handoff });
  })
  .delete("/:id/handoff", async (c) => {
    const id = c.req.param("id");
    const body = await jsonBody(c, CancelInput);
    if (!(await getHandoffRow(db(c.env), id))) throw notFound(`session ${id}`);
    const failed = await sessionAgent(c.env, id).failPendingHandoff(id, body.reason ?? "cancelled: the gateway did not pick it up in time");
    const row = await getHandoffRow(db(c.env), id);
    return c.json({ failed, handoff: row ? handoffJson(row) : null });
  });
