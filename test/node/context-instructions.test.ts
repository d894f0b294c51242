import { describe, expect, it } from "vitest";
import { DEFAULT_SYSTEM_PROMPT, systemMessage, type AgentWhere } from "../../workers/agent/index.ts";

// 2026-12-01 is a Tuesday; 23:59 UTC is already Wednesday east of UTC, which must not matter.
const NOW = Date.UTC(2026, 11, 1, 23, 59);

const text = (input: Parameters<typeof systemMessage>[0]) => systemMessage(input).content ?? "";

describe("the system message", () => {
  it.each<[string, AgentWhere, RegExp]>([
    ["the CLI", { platform: "cli" }, /in the hermes-edge CLI, in a terminal/],
    ["a Telegram DM", { platform: "telegram", chatType: "dm" }, /on Telegram, in a direct message with one person/],
    ["a Discord channel", { platform: "discord", chatType: "channel" }, /on Discord, in a channel, where other members can read/],
    ["a Slack group", { platform: "slack", chatType: "group" }, /on Slack, in a group chat/],
    ["a handoff thread", { platform: "telegram", chatType: "thread", handedOffFromCli: true }, /in a thread.*handed off from the CLI/s],
  ])("says the UTC date and where it is talking: %s", (_, where, place) => {
    const content = text({ now: NOW, where });
    expect(content).toContain("Today is Tuesday, 2026-12-01 (UTC).");
    expect(content).toMatch(place);
    expect(content.includes("handed off"), "only a handoff mentions the handoff").toBe(where.handedOffFromCli === true);
  });

  it("uses the default instructions unless SYSTEM_PROMPT replaces them, then adds the session's own", () => {
    const where: AgentWhere = { platform: "cli" };
    expect(systemMessage({ now: NOW, where })).toMatchObject({ role: "system", content: expect.stringMatching(/^You are a helpful AI assistant/) });
    expect(text({ now: NOW, where, systemPrompt: "   " })).toContain(DEFAULT_SYSTEM_PROMPT);

    const custom = text({ now: NOW, where, systemPrompt: "You are Ada, the team's release bot.", sessionInstructions: "Answer in French." });
    expect(custom).not.toContain(DEFAULT_SYSTEM_PROMPT);
    const order = ["You are Ada, the team's release bot.", "Answer in French.", "Today is"].map((s) => custom.indexOf(s));
    expect(order.every((at) => at >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  it("keeps only the first few thousand characters of the session's instructions", () => {
    const content = text({ now: NOW, where: { platform: "cli" }, sessionInstructions: "x".repeat(50_000) });
    expect(content.length).toBeLessThan(DEFAULT_SYSTEM_PROMPT.length + 5_000);
  });
});
