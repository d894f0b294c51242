import type { Context } from "hono";
import type { z } from "zod";
import { parseJson } from "../json.ts";
import { ApiError } from "./errors.ts";

/** Reads a JSON body and checks it against `schema`: 400 `invalid_json` or `bad_request` otherwise. */
export async function jsonBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  const text = await c.req.text();
  // An empty body is an empty object (every field optional, or the schema says what is missing).
  const checked = parseJson(text.trim() === "" ? "{}" : text, schema);
  if (checked.ok) return checked.value;
  if (checked.notJson) throw new ApiError(400, "invalid_json", "request body is not valid JSON");
  const { path, message } = checked.issue;
  throw new ApiError(400, "bad_request", `${path ? `${path}: ` : ""}${message}`);
}
