import { describe, expect, it } from "vitest";
import { HandoffFailure, placeFor } from "../../durable-objects/session-agent/handoff-place.ts";
import { newRecord } from "../../durable-objects/session-agent/record.ts";
import type { PlatformAdapter } from "../../workers/platforms/types.ts";

/** Where a handoff to a person's DM goes, by what the adapter can do (no network: the adapters here are stand-ins). */
describe("a handoff to a person's DM", () => {
  const rec = { ...newRecord({ source: "telegram", model: "m" }, 0, "s1"), handoffPlatform: "slack", handoffDmUser: "U1", title: "trip" };
  const log = () => undefined;
  const target = { platform: "slack" as const, ref: "x" };

  it("is refused with the reason on a platform whose adapter cannot open a DM (directTarget absent)", async () => {
    const adapter = { name: "slack" } as unknown as PlatformAdapter;
    const refused = placeFor({} as Env, adapter, rec, log);
    await expect(refused).rejects.toBeInstanceOf(HandoffFailure);
    await expect(refused).rejects.toThrow("Slack cannot open a private chat with a user from here");
  });

  it("asks for a fresh private topic where the platform has them, else uses the DM itself, keyed for the user", async () => {
    const dm = { chatId: "D1", source: { platform: "slack" as const, chatType: "dm" as const, chatId: "D1", threadId: null }, target, topics: false };
    const threads: string[] = [];
    const plain = {
      name: "slack",
      directTarget: async () => dm,
      createHandoffThread: async (chat: string) => (threads.push(chat), null),
    } as unknown as PlatformAdapter;
    expect(await placeFor({} as Env, plain, rec, log)).toMatchObject({
      dest: { chatId: "D1", threadId: null },
      source: { userId: "U1" },
      label: "your Slack DM",
    });
    expect(threads).toEqual([]);

    const topical = {
      name: "slack",
      directTarget: async () => ({ ...dm, topics: true }),
      createHandoffThread: async (chat: string) => ({ chatId: chat, threadId: "77" }),
      destination: async (chatId: string, threadId: string | null) => ({ source: { ...dm.source, chatId, threadId }, target }),
    } as unknown as PlatformAdapter;
    expect(await placeFor({} as Env, topical, rec, log)).toMatchObject({ dest: { chatId: "D1", threadId: "77" }, source: { threadId: "77", userId: "U1" } });
  });
});
