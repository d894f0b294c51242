import { and, or, type SQL } from "drizzle-orm";

/**
 * drizzle's `and` / `or` over conditions that are all present. drizzle types them
 * `SQL | undefined` (undefined only when every argument is); with at least one condition
 * given there is always a result, which these return as `SQL`.
 */
export function allOf(first: SQL, ...rest: SQL[]): SQL {
  return present(and(first, ...rest), "and");
}

/** See {@link allOf}. */
export function anyOf(first: SQL, ...rest: SQL[]): SQL {
  return present(or(first, ...rest), "or");
}

function present(c: SQL | undefined, op: string): SQL {
  if (c === undefined) throw new TypeError(`drizzle's ${op}() of at least one condition returned no condition`);
  return c;
}
