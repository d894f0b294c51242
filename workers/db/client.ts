import { drizzle, type DrizzleD1Database } from "drizzle-orm/d1";
import * as schema from "./schema.ts";

export type Db = DrizzleD1Database<typeof schema>;

/** The one database factory. */
export function db(env: { DB: D1Database }): Db {
  return drizzle(env.DB, { schema });
}
