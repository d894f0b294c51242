import { applyD1Migrations, type D1Migration } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeAll, beforeEach, expect } from "vitest";
import { FakeLlm } from "../support/fake-llm.ts";
import { FakeNet } from "../support/fake-net.ts";
import { FakeDiscord, FakeSlack, FakeTelegram } from "../support/fake-platforms.ts";

/** The network of every workerd test: fakes only. */
export const net = new FakeNet();
/** The model provider behind LLM_BASE_URL (https://llm.test/v1). */
export const llm = new FakeLlm();
export const telegram = new FakeTelegram();
export const discord = new FakeDiscord();
export const slack = new FakeSlack();

globalThis.fetch = net.fetch;

beforeAll(async () => {
  await applyD1Migrations(env.DB, (env as unknown as { TEST_MIGRATIONS: D1Migration[] }).TEST_MIGRATIONS);
});

beforeEach(() => {
  net.reset();
  llm.reset();
  telegram.reset();
  discord.reset();
  slack.reset();
  net.route("https://llm.test", (req) => llm.handle(req));
  net.route("https://telegram.test", (req) => telegram.handle(req));
  net.route("https://discord.test", (req) => discord.handle(req));
  net.route("https://slack.test", (req) => slack.handle(req));
});

afterEach(() => {
  expect(net.violations, "outbound requests to hosts no test faked").toEqual([]);
});
