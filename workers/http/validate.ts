import type { Context } from "hono";
import type { z } from "zod";
import { ApiError } from "./errors.ts";

/** Reads a JSON body and checks it against `schema`: 400 `invalid_json` or `bad_request` otherwise. */
export async function jsonBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  const text = await c.req.text();
  let value: unknown = {};
  if (text.trim() !== "") {
    try {
      value = JSON.parse(text);
    } catch {
      throw new ApiError(400, "invalid_json", "request body is not valid JSON");
    }
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
    throw new ApiError(400, "bad_request", `${where}${issue?.message ?? "invalid request body"}`);
  }
  return parsed.data;
}
