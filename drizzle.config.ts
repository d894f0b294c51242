import { defineConfig } from "drizzle-kit";

// `npm run db:generate` writes numbered SQL files into migrations/, which
// `wrangler d1 migrations apply DB` applies (locally with --local).
export default defineConfig({
  dialect: "sqlite",
  schema: "./workers/db/schema.ts",
  out: "./migrations",
});
