import type { z } from "zod";

/** The first thing a schema found wrong: where (dotted path, "" for the value itself), zod's code, and its message. */
export interface FirstIssue {
  path: string;
  code: string;
  message: string;
}

/** Text parsed as JSON and checked with a schema: the value, or that it was not JSON, or the first issue. */
export type JsonChecked<T> = { ok: true; value: T } | { ok: false; notJson: true } | { ok: false; notJson: false; issue: FirstIssue };

/** The first issue of a failed zod parse (each caller words it: some may show the message, some only where and what kind). */
export function firstIssue(error: z.ZodError): FirstIssue {
  const issue = error.issues[0];
  return { path: issue?.path.map(String).join(".") ?? "", code: issue?.code ?? "invalid", message: issue?.message ?? "invalid" };
}

/** The one "parse JSON and report the first zod issue": parses `text` and validates it with `schema`. */
export function parseJson<S extends z.ZodType>(text: string, schema: S): JsonChecked<z.infer<S>> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, notJson: true };
  }
  const parsed = schema.safeParse(value);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, notJson: false, issue: firstIssue(parsed.error) };
}
