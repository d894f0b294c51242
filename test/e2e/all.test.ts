import { afterAll, describe } from "vitest";
import { stopHarnesses } from "../support/e2e.ts";

/**
 * The end-to-end suites, in one file: they share two Workers (the deploy bundle in miniflare: see
 * test/support/e2e.ts), so they run one after another in one process, while the other
 * projects run beside them. Each suite's hooks stay inside its own describe.
 */
describe("platforms end to end", async () => void (await import("./platforms.e2e.ts")));
describe("attachments end to end", async () => void (await import("./attachments.e2e.ts")));
describe("the CLI chat", async () => void (await import("./cli-chat.e2e.ts")));
describe("the CLI data and status commands", async () => void (await import("./cli-data.e2e.ts")));
describe("handoff", async () => void (await import("./handoff.e2e.ts")));
describe("handoff between chats", async () => void (await import("./handoff-chats.e2e.ts")));
describe("Discord Gateway", async () => void (await import("./discord-gateway.e2e.ts")));
describe("WhatsApp", async () => void (await import("./whatsapp.e2e.ts")));
describe("Matrix", async () => void (await import("./matrix.e2e.ts")));
describe("relay", async () => void (await import("./relay.e2e.ts")));
describe("Signal, bridged", async () => void (await import("./signal.e2e.ts")));
describe("the web console", async () => void (await import("./console.e2e.ts")));
describe("the packed CLI", async () => void (await import("./pack.e2e.ts")));

afterAll(() => stopHarnesses());
