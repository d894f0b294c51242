import { SESSION_INSTRUCTIONS_MAX_CHARS } from "../agent/index.ts";
import { db } from "../db/client.ts";
import { setHome } from "../db/platform-state.ts";
import { PLATFORM_LABEL } from "../platforms/names.ts";
import type { CommandEvent, PlatformAdapter } from "../platforms/types.ts";
import { isAllowed, settings } from "../settings.ts";
import { commandPermission, permissionRefusal } from "./permissions.ts";
import { describeSession, recentForSource, resolveForSource, seedFor } from "./sessions.ts";
import { sessionAgent } from "./stubs.ts";
import { maySetHome } from "./home.ts";
import { createSession } from "./new-session.ts";
import { handoffCommand } from "./handoff-command.ts";
import { linkCommand, unlinkCommand, whoamiAnswer } from "./people.ts";
import { helpText } from "./texts.ts";

/** What a chat command runs with: the key's Inbox hands it these. */
export interface CommandContext {
  env: Env;
  /** The session key the command was typed under. */
  key: string;
  event: CommandEvent;
  adapter: PlatformAdapter;
  /** The session the key is bound to now. */
  current(): string | null;
  /** Binds the key to a session; returns the one it was bound to before. */
  bind(sessionId: string): Promise<string | null>;
}

/** Runs a chat command (inside the key's Inbox, after the webhook was answered); returns the reply. */
export async function runCommand(ctx: CommandContext): Promise<string> {
  const { env, event } = ctx;
  const { source } = event;
  const permission = commandPermission(env, event.name, source);
  if (!permission.ok) return permissionRefusal(event.name, source, permission.need);
  switch (event.name) {
    case "help":
      return helpText(ctx.adapter.commands);
    case "whoami":
      return whoamiAnswer(env, source);
    case "link":
      return linkCommand(env, source, event.args, Date.now());
    case "unlink":
      return unlinkCommand(env, source, event.args);
    case "handoff":
      return handoffCommand(ctx);
    case "stop": {
      const sessionId = ctx.current();
      if (!sessionId) return "Nothing is running here.";
      const { interrupted, dropped } = await sessionAgent(env, sessionId).interrupt({ dropQueued: true });
      if (!interrupted && dropped === 0) return "Nothing is running here.";
      const parts = [interrupted ? "Stopped." : "Nothing was running."];
      if (dropped > 0) parts.push(`Dropped ${dropped} waiting message${dropped === 1 ? "" : "s"}.`);
      return parts.join(" ");
    }
    case "new": {
      const { id } = await createSession(env, seedFor(env, source, ctx.key));
      const previous = await ctx.bind(id);
      return previous ? `Started a new session (${id}). The previous one is kept: /resume ${previous}` : `Started a new session (${id}).`;
    }
    case "resume": {
      const d = db(env);
      if (!event.args) {
        const recent = await recentForSource(d, env, source);
        if (recent.length === 0) return "There are no sessions you can resume yet.";
        return ["Recent sessions you can resume:", ...recent.map((s, i) => `${i + 1}. ${describeSession(s)}`), "Resume one with /resume <id or title>."].join(
          "\n",
        );
      }
      const found = await resolveForSource(d, env, source, event.args);
      if (found.kind === "none") return `No session matches "${event.args.slice(0, 100)}" that you can resume here.`;
      if (found.kind === "ambiguous") return [`"${event.args}" matches several sessions:`, ...found.matches.map((s) => `- ${describeSession(s)}`)].join("\n");
      const { session } = found;
      if (ctx.current() === session.id) return `This chat is already on ${describeSession(session)}.`;
      await ctx.bind(session.id);
      return `Resumed ${describeSession(session)}. Your next message continues it.`;
    }
    case "sethome":
      // It decides where every operator handoff goes: admins only (a DM set as home would take the CLI's sessions).
      if (!maySetHome(env, source.platform, source.userId)) return permissionRefusal("sethome", source, "admin");
      await setHome(db(env), source.platform, { chatId: source.chatId, threadId: source.threadId ?? null, chatName: null, setBy: source.userId });
      return `This chat is now the ${PLATFORM_LABEL[source.platform]} home channel: sessions handed off from the CLI will arrive here.`;
    case "status": {
      const sessionId = ctx.current();
      const found = sessionId ? await sessionAgent(env, sessionId).contextStatus() : null;
      if (!found?.ok) return "No session here yet: your next message starts one.";
      const { session: s, context } = found;
      return [
        `Session ${s.id}${s.title ? ` "${s.title}"` : ""} · model ${s.model ?? "?"}`,
        `${context.tokens_in_context} of ${context.budget} tokens in context${context.summary ? " (older turns summarised)" : ""} · ${context.turns} turns · ${s.input_tokens + s.output_tokens} tokens used`,
        s.running ? `A reply is running (${ctx.adapter.commands.prefix}stop stops it).` : "Idle.",
      ].join("\n");
    }
    case "compact": {
      const sessionId = ctx.current();
      const r = sessionId ? await sessionAgent(env, sessionId).compact() : null;
      if (!r?.ok) return "No session here yet: your next message starts one.";
      return r.compacted
        ? `Folded ${r.folded_messages} older messages into the session's summary; the newest turns stay verbatim.`
        : "Nothing to fold yet: this session is still short.";
    }
    case "instructions":
      return instructions(ctx);
    case "tools": {
      const sessionId = ctx.current() ?? (await startSession(ctx));
      const tools = await sessionAgent(env, sessionId).toolList();
      return tools.ok ? tools.text : "No session here yet.";
    }
  }
}

/** A fresh session bound to the key (for a command that needs one before the first message). */
async function startSession(ctx: CommandContext): Promise<string> {
  const { id } = await createSession(ctx.env, seedFor(ctx.env, ctx.event.source, ctx.key));
  await ctx.bind(id);
  return id;
}

/** `/instructions`: no argument shows them, `clear` removes them, anything else sets them. */
async function instructions(ctx: CommandContext): Promise<string> {
  const { args } = ctx.event;
  const existing = ctx.current();
  if (!args) {
    const found = existing ? await sessionAgent(ctx.env, existing).describe() : null;
    const text = found?.ok ? found.session.instructions : null;
    return text
      ? `This session's instructions:\n${text}`
      : `This session has no instructions of its own. Set them with ${ctx.adapter.commands.prefix}instructions <text>.`;
  }
  const sessionId = existing ?? (await startSession(ctx));
  const clear = args.trim().toLowerCase() === "clear";
  if (!clear && args.length > SESSION_INSTRUCTIONS_MAX_CHARS) return `Instructions can be at most ${SESSION_INSTRUCTIONS_MAX_CHARS} characters.`;
  await sessionAgent(ctx.env, sessionId).update({ instructions: clear ? null : args.trim() });
  return clear ? "Cleared this session's instructions." : "Saved. The agent follows these instructions in this session from your next message.";
}
