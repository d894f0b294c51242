import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { adapterFor } from "../../workers/platforms/registry.ts";
import { buildSessionKey } from "../../workers/platforms/session-key.ts";
import type { PlatformEvent, PlatformAdapter } from "../../workers/platforms/types.ts";
import { dc, sl, tg } from "../support/fixtures.ts";
import { wa } from "../support/whatsapp-fixtures.ts";
import { SLACK_TEST } from "../support/signing.ts";

/**
 * One contract, every adapter: each parses real-shaped payloads of its platform, and the
 * session-key rules of SPEC section 2 hold the same way for all of them.
 */
interface Case {
  platform: "telegram" | "discord" | "slack";
  payload: unknown;
  form?: boolean;
}
interface Contract {
  dm: (user: string) => Case;
  group: (user: string) => Case;
  thread: (user: string) => Case;
  keys: { dm: string; groupPrefix: string; thread: string };
}

const team = SLACK_TEST.team;
const contracts: Record<string, Contract> = {
  telegram: {
    dm: (u) => ({ platform: "telegram", payload: tg.dm("hi", Number(u)) }),
    group: (u) => ({ platform: "telegram", payload: tg.group("hi", { mention: true, userId: Number(u), chatId: -100200 }) }),
    thread: (u) => ({ platform: "telegram", payload: tg.topic("hi", 55, { userId: Number(u), chatId: -100300 }) }),
    keys: { dm: "agent:main:telegram:dm:1001", groupPrefix: "agent:main:telegram:group:-100200", thread: "agent:main:telegram:group:-100300:55" },
  },
  discord: {
    dm: (u) => ({ platform: "discord", payload: dc.command("ask", { prompt: "hi" }, { userId: u, channelId: "7001", dm: true }) }),
    group: (u) => ({ platform: "discord", payload: dc.command("ask", { prompt: "hi" }, { userId: u, channelId: "3001" }) }),
    thread: (u) => ({ platform: "discord", payload: dc.command("ask", { prompt: "hi" }, { userId: u, thread: { id: "4444", parent: "3001" } }) }),
    keys: { dm: "agent:main:discord:dm:7001", groupPrefix: "agent:main:discord:group:3001", thread: "agent:main:discord:thread:4444:4444" },
  },
  slack: {
    dm: (u) => ({ platform: "slack", payload: sl.dm("hi", u === "1001" ? "U1001" : "U1002", "D1001") }),
    group: (u) => ({ platform: "slack", payload: sl.slash("stop", u === "1001" ? "U1001" : "U1002", "C1001"), form: true }),
    thread: (u) => ({ platform: "slack", payload: sl.threadReply("hi", "1700.5", u === "1001" ? "U1001" : "U1002", "C1001") }),
    keys: { dm: `agent:main:slack:dm:${team}:D1001`, groupPrefix: `agent:main:slack:group:${team}:C1001`, thread: `agent:main:slack:group:${team}:C1001:1700.5` },
  },
};

const userIds: Record<string, [string, string]> = { telegram: ["1001", "1002"], discord: ["2001", "2002"], slack: ["U1001", "U1002"] };

async function parse(c: Case): Promise<{ adapter: PlatformAdapter; message: PlatformEvent }> {
  const adapter = adapterFor(env, c.platform)!;
  const body = typeof c.payload === "string" ? c.payload : JSON.stringify(c.payload);
  const headers = new Headers({ "content-type": c.form ? "application/x-www-form-urlencoded" : "application/json" });
  const ingest = adapter.ingest(body, headers);
  if (ingest.kind !== "event") throw new Error(`${c.platform}: expected an event, got ${ingest.kind}`);
  return { adapter, message: ingest.event };
}

describe.each(Object.entries(contracts))("session keys: %s", (name, contract) => {
  const [a, b] = userIds[name]!;
  const numeric = (u: string) => (name === "slack" ? (u === "U1001" ? "1001" : "1002") : name === "discord" ? u : u);

  it("keys a DM on the chat", async () => {
    const { message } = await parse(contract.dm(numeric(a)));
    expect(buildSessionKey(message.source)).toBe(contract.keys.dm);
  });

  it("gives each user their own session in a group, unless groupSessionsPerUser is off", async () => {
    const [x, y] = [await parse(contract.group(numeric(a))), await parse(contract.group(numeric(b)))];
    expect(buildSessionKey(x.message.source)).toBe(`${contract.keys.groupPrefix}:${a}`);
    expect(buildSessionKey(y.message.source)).toBe(`${contract.keys.groupPrefix}:${b}`);
    expect(buildSessionKey(x.message.source, { groupSessionsPerUser: false })).toBe(contract.keys.groupPrefix);
  });

  it("shares one session per thread, unless threadSessionsPerUser is on", async () => {
    const [x, y] = [await parse(contract.thread(numeric(a))), await parse(contract.thread(numeric(b)))];
    expect(buildSessionKey(x.message.source)).toBe(contract.keys.thread);
    expect(buildSessionKey(y.message.source)).toBe(contract.keys.thread);
    expect(buildSessionKey(x.message.source, { threadSessionsPerUser: true })).toBe(`${contract.keys.thread}:${a}`);
  });

  it("derives a thread's source for outbound use exactly as its messages parse", async () => {
    const { adapter, message } = await parse(contract.thread(numeric(a)));
    const where = adapter.describeTarget(message.target);
    const derived = await adapter.destination(where.chatId, where.threadId);
    expect(buildSessionKey({ ...derived.source, userId: "someone-else" })).toBe(buildSessionKey(message.source));
  });
});

/** WhatsApp has DMs only (no groups served, no threads): the DM part of the contract. */
describe("session keys: whatsapp", () => {
  const parseDm = (from: string) => {
    const adapter = adapterFor(env, "whatsapp")!;
    const ingest = adapter.ingest(JSON.stringify(wa.dm(from, "hi")), new Headers({ "content-type": "application/json" }));
    if (ingest.kind !== "batch" || !ingest.events[0]) throw new Error(`whatsapp: expected a batch with an event, got ${ingest.kind}`);
    return { adapter, message: ingest.events[0] };
  };

  it("keys a DM on the user as Hermes does (agent:main:whatsapp:dm:<wa_id>), one session per user", () => {
    expect(buildSessionKey(parseDm("15550001001").message.source)).toBe("agent:main:whatsapp:dm:15550001001");
    expect(buildSessionKey(parseDm("15550001002").message.source)).toBe("agent:main:whatsapp:dm:15550001002");
  });

  it("derives a DM's source for outbound use (a handoff) exactly as its messages parse", async () => {
    const { adapter, message } = parseDm("15550001001");
    const where = adapter.describeTarget(message.target);
    const derived = await adapter.destination(where.chatId, where.threadId);
    expect(buildSessionKey({ ...derived.source, userId: "someone-else" })).toBe(buildSessionKey(message.source));
  });
});
