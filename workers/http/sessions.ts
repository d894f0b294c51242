import { Hono } from "hono";
import * as z from "zod";
import { SESSION_INSTRUCTIONS_MAX_CHARS } from "../agent/index.ts";
import { modelName } from "../conversations/sessions.ts";
import { createSession } from "../conversations/new-session.ts";
import { sessionAgent } from "../conversations/stubs.ts";
import { db } from "../db/client.ts";
import { sessionJson } from "../db/json.ts";
import { decodeCursor, encodeCursor, listSessions, MAX_REF_LENGTH } from "../db/sessions.ts";
import { callerOf } from "./auth.ts";
import { ApiError, notFound } from "./errors.ts";
import { turnStream } from "./turn-stream.ts";
import { jsonBody } from "./validate.ts";

const CreateSession = z.lazy(() => z.object({ title: z.string().trim().min(1).max(200).optional() }));
const TurnInput = z.lazy(() => z.object({ content: z.string().refine((s) => s.trim() !== "", "content must not be empty") }));
const PatchSession = z.lazy(() =>
  z
    .object({
      title: z.string().trim().min(1).max(200).nullable().optional(),
      instructions: z.string().max(SESSION_INSTRUCTIONS_MAX_CHARS).nullable().optional(),
    })
    .refine((b) => b.title !== undefined || b.instructions !== undefined, "give title and/or instructions"),
);
const ListQuery = z.lazy(() =>
  z.object({
    limit: z.coerce.number().int().min(1).max(200).default(50),
    source: z.string().min(1).max(40).optional(),
    /** Part of the title or id (case-insensitive). */
    q: z.string().trim().max(MAX_REF_LENGTH).optional(),
    /** The `next` of the page before: lists on from there. */
    before: z
      .string()
      .max(220)
      .transform((raw, ctx) => decodeCursor(raw) ?? (ctx.addIssue({ code: "custom", message: "before: not a cursor this API gave out" }), z.NEVER))
      .optional(),
  }),
);

/** A session id from the path; anything that cannot be one is simply not found. */
function sessionIdOf(raw: string): string {
  if (raw.length === 0 || raw.length > MAX_REF_LENGTH) throw notFound(`session ${raw.slice(0, 40)}`);
  return raw;
}

/** `/v1/sessions`: sessions, transcripts, streamed turns and interrupts. Each session's own object answers for it. */
export const sessionRoutes = new Hono<{ Bindings: Env }>()
  .post("/", async (c) => {
    const body = await jsonBody(c, CreateSession);
    const session = await createSession(c.env, { source: callerOf(c.req.raw), title: body.title ?? null, model: modelName(c.env) });
    return c.json({ session }, 201);
  })
  .get("/", async (c) => {
    const q = ListQuery.safeParse(c.req.query());
    if (!q.success) throw new ApiError(400, "bad_request", q.error.issues[0]?.message ?? "bad query");
    const rows = await listSessions(db(c.env), q.data);
    const last = rows.at(-1);
    return c.json({ sessions: rows.map((r) => sessionJson(r)), next: last && rows.length === q.data.limit ? encodeCursor(last) : null });
  })
  .get("/:id", async (c) => {
    const id = sessionIdOf(c.req.param("id"));
    const found = await sessionAgent(c.env, id).describe();
    if (!found.ok) throw notFound(`session ${id}`);
    return c.json({ session: found.session });
  })
  .patch("/:id", async (c) => {
    const id = sessionIdOf(c.req.param("id"));
    const body = await jsonBody(c, PatchSession);
    const instructions = body.instructions === undefined ? undefined : body.instructions?.trim() || null;
    const found = await sessionAgent(c.env, id).update({
      ...(body.title !== undefined ? { title: body.title } : {}),
      ...(instructions !== undefined ? { instructions } : {}),
    });
    if (!found.ok) throw notFound(`session ${id}`);
    return c.json({ session: found.session });
  })
  .delete("/:id", async (c) => {
    const id = sessionIdOf(c.req.param("id"));
    if (!(await sessionAgent(c.env, id).destroy()).ok) throw notFound(`session ${id}`);
    return c.json({ deleted: true });
  })
  .post("/:id/compact", async (c) => {
    const id = sessionIdOf(c.req.param("id"));
    const result = await sessionAgent(c.env, id).compact();
    if (!result.ok) throw notFound(`session ${id}`);
    return c.json({ compacted: result.compacted, folded_messages: result.folded_messages });
  })
  .get("/:id/messages", async (c) => {
    const id = sessionIdOf(c.req.param("id"));
    const found = await sessionAgent(c.env, id).messages();
    if (!found.ok) throw notFound(`session ${id}`);
    return c.json(found.transcript);
  })
  .post("/:id/turns", async (c) => {
    const id = sessionIdOf(c.req.param("id"));
    const { content } = await jsonBody(c, TurnInput);
    const result = await sessionAgent(c.env, id).startTurn(content);
    if (!result.ok && result.code === "not_found") throw notFound(`session ${id}`);
    if (!result.ok) throw new ApiError(409, result.code, result.message);
    return new Response(turnStream(result.stream), {
      status: 200,
      headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", "x-turn-id": result.turnId },
    });
  })
  .post("/:id/interrupt", async (c) => {
    const id = sessionIdOf(c.req.param("id"));
    const agent = sessionAgent(c.env, id);
    if (!(await agent.describe()).ok) throw notFound(`session ${id}`);
    const { interrupted } = await agent.interrupt();
    return c.json({ interrupted });
  });
