import { Hono } from "hono";
import * as z from "zod";
import { sessionAgent } from "../conversations/stubs.ts";
import { isPlatformName } from "../platforms/names.ts";
import { settings } from "../settings.ts";
import { ApiError, notFound } from "./errors.ts";
import { personDmUser } from "./people.ts";
import { jsonBody } from "./validate.ts";

const HandoffInput = z.lazy(() =>
  z.object({
    platform: z.string().trim().min(1).max(40),
    chat_id: z.string().trim().min(1).max(200).optional(),
    thread: z.boolean().optional(),
    /** A person's DM instead of the home channel: a person id, or `operator` (the CLI's linked accounts). */
    person: z.string().trim().min(1).max(80).optional(),
  }),
);

const WaitQuery = z.lazy(() =>
  z.object({
    wait: z.coerce.number().min(0).max(30).default(0),
    state: z.enum(["none", "pending", "running", "completed", "failed"]).optional(),
  }),
);

const CancelInput = z.lazy(() => z.object({ reason: z.string().trim().min(1).max(500).optional() }));

/**
 * `/v1/sessions/:id/handoff`: request, watch (long-poll) and give up on a handoff. The
 * session's own object holds the state and carries the handoff out; a request is answered
 * after one round trip to it (the home channel, when needed, is read at the same time).
 */
export const handoffRoutes = new Hono<{ Bindings: Env }>()
  .post("/:id/handoff", async (c) => {
    const id = c.req.param("id");
    const body = await jsonBody(c, HandoffInput);
    const platform = body.platform.toLowerCase();
    if (!isPlatformName(platform)) throw new ApiError(400, "unknown_platform", `unknown platform '${body.platform}' (telegram, discord, slack)`);
    const ps = settings(c.env).platforms[platform];
    if (!ps.enabled) throw new ApiError(422, "platform_not_configured", `${platform} is not configured on this Worker (set ${ps.missing.join(", ")})`);
    if (ps.gateway)
      throw new ApiError(
        422,
        "platform_not_configured",
        `${platform} turns run on a relay gateway, which keeps its own transcripts; hand off to a platform the Worker serves`,
      );
    // The session's object checks the destination (a home channel set by an admin) before it stores anything.
    if (body.person && body.chat_id) throw new ApiError(400, "bad_request", "give either person or chat_id, not both");
    const dmUser = body.person ? await personDmUser(c.env, body.person, platform) : null;
    const result = await sessionAgent(c.env, id).requestHandoff({ platform, chatId: body.chat_id ?? null, thread: body.thread ?? true, dmUser });
    if (!result.ok && result.code === "not_found") throw notFound(`session ${id}`);
    if (!result.ok && (result.code === "no_home_channel" || result.code === "no_direct_chat")) throw new ApiError(422, result.code, result.message);
    if (!result.ok && result.code === "turn_in_progress") throw new ApiError(409, "turn_in_progress", "the agent is busy: a turn is running in this session");
    if (!result.ok) throw new ApiError(409, "handoff_in_flight", "a handoff of this session is already pending or running");
    return c.json({ handoff: { state: "pending", platform, to: result.to } }, 202);
  })
  .get("/:id/handoff", async (c) => {
    const id = c.req.param("id");
    const q = WaitQuery.safeParse(c.req.query());
    if (!q.success) throw new ApiError(400, "bad_request", q.error.issues[0]?.message ?? "bad query");
    const agent = sessionAgent(c.env, id);
    const found =
      q.data.wait === 0 || q.data.state === undefined
        ? await agent.handoff()
        : await agent.waitHandoff(q.data.state === "none" ? null : q.data.state, q.data.wait * 1000);
    if (!found.ok) throw notFound(`session ${id}`);
    return c.json({ handoff: found.handoff });
  })
  .delete("/:id/handoff", async (c) => {
    const id = c.req.param("id");
    const body = await jsonBody(c, CancelInput);
    const result = await sessionAgent(c.env, id).failPendingHandoff(body.reason ?? "cancelled: the gateway did not pick it up in time");
    if (!result.ok) throw notFound(`session ${id}`);
    return c.json({ failed: result.failed, handoff: result.handoff });
  });
