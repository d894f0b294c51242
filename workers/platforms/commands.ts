import type { Db } from "../db/client.ts";
import { setHome } from "../db/platform-state.ts";
import { bindRoute, routeFor } from "../db/routes.ts";
import { sessionAgent } from "../http/sessions.ts";
import { buildSessionKey } from "./session-key.ts";
import { newSessionForSource, recentForSource, resolveForSource } from "./sessions.ts";
import type { ChatCommand, SessionSource } from "./types.ts";

/** Chat commands every platform understands. */
export const CHAT_COMMANDS = ["stop", "new", "resume", "sethome", "help"] as const;

export function isChatCommand(c: ChatCommand | null): c is ChatCommand {
  return c !== null && (CHAT_COMMANDS as readonly string[]).includes(c.name === "start" ? "help" : c.name);
}

const PLATFORM_LABEL = { telegram: "Telegram", discord: "Discord", slack: "Slack" } as const;

export function helpText(platform: SessionSource["platform"]): string {
  const ask = platform === "discord" ? "Use /ask to talk to the agent (in handoff threads too)." : platform === "slack" ? "Message me directly, mention me in a channel, or reply in a thread I am in." : "Send a message to talk to the agent (in groups: mention me or reply to me).";
  const c = platform === "slack" ? "/hermes " : "/";
  return [
    ask,
    `${c}stop: stop the reply that is running here`,
    `${c}new: start a fresh session here`,
    `${c}resume <id or title>: continue an earlier session here (no argument: list recent ones)`,
    `${c}sethome: make this chat the home channel for handoffs from the CLI`,
    `${c}help: this help`,
  ].join("\n");
}

function describe(s: { id: string; title: string | null; source: string; messageCount: number }): string {
  return `${s.id}${s.title ? ` "${s.title}"` : ""} (${s.source}, ${s.messageCount} messages)`;
}

/** Runs a chat command and returns the reply text. */
export async function runCommand(d: Db, env: Env, source: SessionSource, command: ChatCommand): Promise<string> {
  const key = buildSessionKey(source);
  switch (command.name === "start" ? "help" : command.name) {
    case "help":
      return helpText(source.platform);
    case "stop": {
      const sessionId = await routeFor(d, key);
      if (!sessionId) return "Nothing is running here.";
      const { interrupted, dropped } = await sessionAgent(env, sessionId).interrupt({ dropQueued: true });
      if (!interrupted && dropped === 0) return "Nothing is running here.";
      const parts = [interrupted ? "Stopped." : "Nothing was running."];
      if (dropped > 0) parts.push(`Dropped ${dropped} waiting message${dropped === 1 ? "" : "s"}.`);
      return parts.join(" ");
    }
    case "new": {
      const { sessionId, previous } = await newSessionForSource(d, env, source);
      return previous ? `Started a new session (${sessionId}). The previous one is kept: /resume ${previous}` : `Started a new session (${sessionId}).`;
    }
    case "resume": {
      if (!command.args) {
        const recent = await recentForSource(d, env, source);
        if (recent.length === 0) return "There are no sessions you can resume yet.";
        return ["Recent sessions you can resume:", ...recent.map((s, i) => `${i + 1}. ${describe(s)}`), "Resume one with /resume <id or title>."].join("\n");
      }
      const found = await resolveForSource(d, env, source, command.args);
      if (found.kind === "none") return `No session matches "${command.args}" that you can resume here.`;
      if (found.kind === "ambiguous") return [`"${command.args}" matches several sessions:`, ...found.matches.map((s) => `- ${describe(s)}`)].join("\n");
      const { session } = found;
      const current = await routeFor(d, key);
      if (current === session.id) return `This chat is already on ${describe(session)}.`;
      await bindRoute(d, key, session.id, source);
      return `Resumed ${describe(session)}. Your next message continues it.`;
    }
    case "sethome": {
      await setHome(d, source.platform, { chatId: source.chatId, threadId: source.threadId ?? null, chatName: null, setBy: source.userId });
      return `This chat is now the ${PLATFORM_LABEL[source.platform]} home channel: sessions handed off from the CLI will arrive here.`;
    }
    default:
      return helpText(source.platform);
  }
}
