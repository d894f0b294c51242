import { Hono } from "hono";
import * as z from "zod";
import { sessionAgent } from "../conversations/stubs.ts";
import { db } from "../db/client.ts";
import { fromJsonl, toJsonl, toMarkdown } from "../conversations/export.ts";
import { usageReport } from "../db/usage.ts";
import { ApiError, notFound } from "./errors.ts";

const ExportQuery = z.lazy(() => z.object({ format: z.enum(["jsonl", "md"]).default("jsonl") }));
const day = z.lazy(() => z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "a UTC day, YYYY-MM-DD"));
const UsageQuery = z.lazy(() => z.object({ group: z.enum(["session", "user", "day"]).default("day"), since: day.optional(), until: day.optional() }));

/** `GET /v1/sessions/:id/export`, `POST /v1/sessions/import`: data people take with them. */
export const dataRoutes = new Hono<{ Bindings: Env }>()
  .get("/:id/export", async (c) => {
    const id = c.req.param("id");
    const q = ExportQuery.safeParse(c.req.query());
    if (!q.success) throw new ApiError(400, "bad_request", q.error.issues[0]?.message ?? "bad query");
    const found = await sessionAgent(c.env, id).exportData();
    if (!found.ok) throw notFound(`session ${id}`);
    const { data } = found;
    if (q.data.format === "md") return c.body(toMarkdown(data), 200, { "content-type": "text/markdown; charset=utf-8" });
    return c.body(toJsonl(data), 200, { "content-type": "application/x-ndjson; charset=utf-8" });
  })
  .post("/import", async (c) => {
    const parsed = fromJsonl(new TextDecoder().decode(await c.req.arrayBuffer()));
    if (!parsed.ok) throw new ApiError(400, "bad_request", parsed.error);
    if (parsed.sessions.length === 0) throw new ApiError(400, "bad_request", "no session in the body (JSONL from `hermes-edge sessions export`)");
    const imported: string[] = [];
    const skipped: string[] = [];
    for (const s of parsed.sessions) ((await sessionAgent(c.env, s.session.id).importData(s)).ok ? imported : skipped).push(s.session.id);
    return c.json({ imported, skipped }, imported.length > 0 ? 201 : 200);
  });

/** `GET /v1/usage?group=session|user|day&since=&until=`: tokens and turns, grouped. */
export const usageRoutes = new Hono<{ Bindings: Env }>().get("/", async (c) => {
  const q = UsageQuery.safeParse(c.req.query());
  if (!q.success) throw new ApiError(400, "bad_request", q.error.issues[0]?.message ?? "bad query");
  return c.json({ usage: await usageReport(db(c.env), q.data.group, q.data.since, q.data.until) });
});
