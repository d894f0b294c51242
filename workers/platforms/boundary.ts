import type { z } from "zod";
import { parseJson } from "../json.ts";

/** A JSON body checked against a platform schema: the value, or why it was refused. */
export type Checked<T> = { ok: true; value: T } | { ok: false; reason: string };

/** The intake of a body that failed its schema: 2xx and ignored (logged once by the intake). */
export function malformed(reason: string): { kind: "ignore"; reason: string; malformed: string } {
  return { kind: "ignore", reason, malformed: reason };
}

/**
 * Parses `body` as JSON and validates it with `schema`. The reason names the first bad
 * field's path and what was wrong, never its value (bodies may carry personal data).
 */
export function checkJson<S extends z.ZodType>(body: string, schema: S): Checked<z.infer<S>> {
  const checked = parseJson(body, schema);
  if (checked.ok) return checked;
  if (checked.notJson) return { ok: false, reason: "malformed JSON" };
  return { ok: false, reason: `unexpected payload at ${checked.issue.path || "body"}: ${checked.issue.code}` };
}
