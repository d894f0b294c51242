import { drizzle, type DrizzleD1Database } from "drizzle-orm/d1";
import * as schema from "./schema.ts";

export type Db = DrizzleD1Database<typeof schema>;

/**
 * One drizzle instance per D1 binding, made on first use: building one walks the whole
 * schema (its relational config), which every webhook's objects did several times over
 * (the D1 copy behind each turn, each route sync). The instance holds nothing but the
 * binding, which is the isolate's for every request.
 */
const instances = new WeakMap<D1Database, Db>();

/** The one database factory. */
export function db(env: { DB: D1Database }): Db {
  let d = instances.get(env.DB);
  if (!d) instances.set(env.DB, (d = drizzle(env.DB, { schema })));
  return d;
}
