import { applyD1Migrations, type D1Migration } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeAll, beforeEach, expect } from "vitest";
import { FakeLlm } from "../support/fake-llm.ts";
import { FakeNet } from "../support/fake-net.ts";

/** The network of every workerd test: fakes only. */
export const net = new FakeNet();
/** The model provider behind LLM_BASE_URL (https://llm.test/v1). */
export const llm = new FakeLlm();

globalThis.fetch = net.fetch;

beforeAll(async () => {
  await applyD1Migrations(env.DB, (env as unknown as { TEST_MIGRATIONS: D1Migration[] }).TEST_MIGRATIONS);
});

beforeEach(() => {
  net.reset();
  llm.reset();
  net.route("https://llm.test", (req) => llm.handle(req));
});

afterEach(() => {
  expect(net.violations, "outbound requests to hosts no test faked").toEqual([]);
});
