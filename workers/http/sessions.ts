import { Hono } from "hono";
import { z } from "zod";
import { OFFLINE_MODEL_ID } from "../agent/index.ts";
import { modelConfig } from "../config.ts";
import { db } from "../db/client.ts";
import { activeMessageRows, messageJson } from "../db/messages.ts";
import { createSession, getSession, listSessions, sessionJson } from "../db/sessions.ts";
import { ApiError, notFound } from "./errors.ts";
import { jsonBody } from "./validate.ts";

const CreateSession = z.object({ title: z.string().trim().min(1).max(200).optional() });
const TurnInput = z.object({ content: z.string().refine((s) => s.trim() !== "", "content must not be empty") });
const ListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  source: z.string().min(1).max(40).optional(),
});

/** The SessionAgent that owns a session's turns. */
export function sessionAgent(env: Env, sessionId: string) {
  return env.SESSION_AGENT.get(env.SESSION_AGENT.idFromName(sessionId));
}

async function requireSession(env: Env, id: string) {
  const row = await getSession(db(env), id);
  if (!row) throw notFound(`session ${id}`);
  return row;
}

/** `/v1/sessions`: sessions, transcripts, streamed turns and interrupts. */
export const sessionRoutes = new Hono<{ Bindings: Env }>()
  .post("/", async (c) => {
    const body = await jsonBody(c, CreateSession);
    const cfg = modelConfig(c.env);
    const row = await createSession(db(c.env), { source: "cli", title: body.title, model: cfg.baseUrl ? cfg.model ?? null : OFFLINE_MODEL_ID });
    return c.json({ session: sessionJson(row) }, 201);
  })
  .get("/", async (c) => {
    const q = ListQuery.safeParse(c.req.query());
    if (!q.success) throw new ApiError(400, "bad_request", q.error.issues[0]?.message ?? "bad query");
    const rows = await listSessions(db(c.env), q.data);
    return c.json({ sessions: rows.map(sessionJson) });
  })
  .get("/:id", async (c) => {
    const row = await requireSession(c.env, c.req.param("id"));
    // The session's own object knows whether a turn runs; the D1 flag can lag it.
    const { running } = await sessionAgent(c.env, row.id).status();
    return c.json({ session: { ...sessionJson(row), running } });
  })
  .get("/:id/messages", async (c) => {
    const row = await requireSession(c.env, c.req.param("id"));
    const rows = await activeMessageRows(db(c.env), row.id);
    return c.json({ messages: rows.map(messageJson) });
  })
  .post("/:id/turns", async (c) => {
    // No lookup here: the session's object knows (and caches) whether its session exists.
    const id = c.req.param("id");
    const { content } = await jsonBody(c, TurnInput);
    const result = await sessionAgent(c.env, id).startTurn(id, content);
    if (!result.ok && result.code === "not_found") throw notFound(`session ${id}`);
    if (!result.ok) throw new ApiError(409, result.code, result.message);
    return new Response(result.stream, {
      status: 200,
      headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", "x-turn-id": result.turnId },
    });
  })
  .post("/:id/interrupt", async (c) => {
    const row = await requireSession(c.env, c.req.param("id"));
    const { interrupted } = await sessionAgent(c.env, row.id).interrupt();
    return c.json({ interrupted });
  });
