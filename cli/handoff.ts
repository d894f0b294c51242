import type { Writable } from "node:stream";
import type { Handoff, Session } from "./api-types.ts";
import { ApiRefusal, CliError, type ApiClient } from "./client.ts";
import { println, type CliIo, type Style } from "./io.ts";
import { describeHandoffDestination, isPlatformName, type HomeChannelInfo } from "../workers/platforms/names.ts";

/** How long the CLI waits for a gateway to pick a request up, and then to finish it. */
export const PICKUP_TIMEOUT_MS = 60_000;
export const TRANSFER_TIMEOUT_MS = 15 * 60_000;
export const HEARTBEAT_MS = 30_000;

interface PlatformInfo {
  name: string;
  enabled: boolean;
  relay: boolean;
  home_channel: (HomeChannelInfo & { refused?: string | null }) | null;
  /** The settings it still lacks (an older Worker may not say). */
  missing?: string[];
  /** The command that points the platform at this Worker. */
  setup?: string;
}

export interface HandoffOptions {
  client: ApiClient;
  io: CliIo;
  style: Style;
  session: Session;
  platform: string;
  chatId?: string | undefined;
  thread: boolean;
  /** A person's DM instead of the home channel: `operator` (the accounts linked to this CLI). */
  person?: string;
  wait: boolean;
  /** Progress lines go here (stderr when stdout carries JSON). */
  progress: Writable & { isTTY?: boolean };
  /** Aborting stops the wait (Ctrl-C). */
  signal?: AbortSignal;
}

export type HandoffResult = { outcome: "completed" | "failed" | "timeout" | "queued" | "cancelled"; handoff: Handoff | null };

const PLATFORM_LIST = "telegram, discord or slack";

/** Usage of the chat command, also shown when it is given no platform. */
export const HANDOFF_USAGE = `Usage: /handoff <platform> [dm]   (${PLATFORM_LIST})
Moves this session to that platform's home channel (a fresh thread there when it can),
or with dm to your own DM there (the account linked to this CLI with hermes-edge link).
The session is kept: come back to it any time with hermes-edge chat --resume <id>.`;

/**
 * Checks what can be checked before asking (SPEC section 4 order); throws with the reason.
 * Returns where the handoff will go, shown before it is queued.
 */
async function precheck(o: HandoffOptions): Promise<string> {
  const { platforms } = await o.client.json<{ platforms: PlatformInfo[] }>("GET", "/v1/platforms");
  const p = platforms.find((x) => x.name === o.platform);
  if (!p) throw new CliError(`unknown platform '${o.platform}' (${PLATFORM_LIST})`);
  if (!p.enabled) {
    const missing =
      p.missing && p.missing.length > 0
        ? `: set ${p.missing.join(", ")} on the Worker (locally in .dev.vars, then restart it; deployed: npx wrangler secret put <NAME>)${p.setup ? `, then run ${p.setup}` : ""}`
        : "";
    throw new CliError(
      `${o.platform} is not configured on the Worker${missing || ` (see README: "${o.platform.charAt(0).toUpperCase()}${o.platform.slice(1)}")`}`,
    );
  }
  if (o.person) {
    const { session } = await o.client.json<{ session: Session }>("GET", `/v1/sessions/${encodeURIComponent(o.session.id)}`);
    if (session.running) throw new CliError("the agent is busy: wait for the current reply to finish (or stop it), then hand off again");
    return `${o.platform} DM of the account linked to this CLI`;
  }
  const home = o.chatId ? { chat_id: o.chatId, thread_id: null, source: "request" } : p.home_channel;
  if (!home)
    throw new CliError(
      `${o.platform} has no home channel yet: an admin (${o.platform.toUpperCase()}_ADMIN_USERS) sends /sethome in the ${o.platform} chat where sessions should arrive, then try again`,
    );
  if (!o.chatId && p.home_channel?.refused) throw new CliError(`not handing off: ${p.home_channel.refused}`);
  const { session } = await o.client.json<{ session: Session }>("GET", `/v1/sessions/${encodeURIComponent(o.session.id)}`);
  if (session.running) throw new CliError("the agent is busy: wait for the current reply to finish (or stop it), then hand off again");
  if (!isPlatformName(p.name)) return p.name;
  return describeHandoffDestination(p.name, home, { thread: o.thread, explicit: Boolean(o.chatId) });
}

function describeDestination(platform: string, h: Handoff): string {
  const d = h.destination;
  if (!d) return platform;
  return `${platform} chat ${d.chat_id}${d.thread_id ? `, thread ${d.thread_id}` : ""}`;
}

/** A spinner line on a terminal, nothing otherwise (plain lines are printed at phase changes). */
function spinner(out: HandoffOptions["progress"], style: Style) {
  if (!out.isTTY) return { set() {}, stop() {} };
  const frames = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏";
  let label = "";
  let started = Date.now();
  let i = 0;
  const draw = () =>
    out.write(`\r\x1b[2K${style.cyan(frames.charAt(i++ % frames.length))} ${label} ${style.dim(`${Math.round((Date.now() - started) / 1000)}s`)}`);
  const timer = setInterval(draw, 100);
  return {
    set(text: string) {
      label = text;
      started = Date.now();
      draw();
    },
    stop() {
      clearInterval(timer);
      out.write("\r\x1b[2K");
    },
  };
}

/**
 * `/handoff <platform>` and `sessions handoff`: checks, requests, then waits (long-polls)
 * for pickup (60 s) and completion (15 min), printing each phase.
 */
export async function runHandoff(o: HandoffOptions): Promise<HandoffResult> {
  const say = (s: string) => println(o.progress, s);
  say(`→ ${await precheck(o)}`);
  const id = encodeURIComponent(o.session.id);
  try {
    await o.client.json("POST", `/v1/sessions/${id}/handoff`, {
      platform: o.platform,
      ...(o.chatId ? { chat_id: o.chatId } : {}),
      ...(o.person ? { person: o.person } : {}),
      thread: o.thread,
    });
  } catch (err) {
    if (err instanceof ApiRefusal && err.code === "turn_in_progress")
      throw new CliError("the agent is busy: wait for the current reply to finish (or stop it), then hand off again");
    throw err;
  }
  say(`Queued handoff of '${o.session.title ?? o.session.id}' → ${o.platform}`);
  if (!o.wait) return { outcome: "queued", handoff: null };

  const spin = spinner(o.progress, o.style);
  // A long poll Ctrl-C can cut short: the wait then ends at once instead of up to 30 s later.
  const poll = async (state: string, ms: number): Promise<Handoff | null> => {
    const path = `/v1/sessions/${id}/handoff?wait=${Math.max(1, Math.min(30, Math.ceil(ms / 1000)))}&state=${state}`;
    try {
      return (await o.client.json<{ handoff: Handoff | null }>("GET", path, undefined, o.signal)).handoff;
    } catch (err) {
      if (!o.signal?.aborted) throw err;
      return (await o.client.json<{ handoff: Handoff | null }>("GET", `/v1/sessions/${id}/handoff`)).handoff;
    }
  };
  const gaveUp = async (): Promise<HandoffResult> => {
    const r = await o.client.json<{ failed: boolean; handoff: Handoff | null }>("DELETE", `/v1/sessions/${id}/handoff`, {
      reason: "cancelled: nobody picked it up in time",
    });
    return { outcome: r.failed ? "cancelled" : "timeout", handoff: r.handoff };
  };
  try {
    spin.set(`waiting for the gateway to pick it up…`);
    let h: Handoff | null = null;
    const pickupBy = Date.now() + PICKUP_TIMEOUT_MS;
    while ((h = await poll("pending", pickupBy - Date.now()))?.state === "pending") {
      if (o.signal?.aborted) return (spin.stop(), await gaveUp());
      if (Date.now() >= pickupBy) {
        spin.stop();
        const r = await o.client.json<{ failed: boolean; handoff: Handoff | null }>("DELETE", `/v1/sessions/${id}/handoff`, {
          reason: "timed out waiting for the gateway to pick it up",
        });
        if (r.failed) {
          say(o.style.red(`The gateway did not pick up the handoff within ${PICKUP_TIMEOUT_MS / 1000} s. Your CLI session is intact.`));
          return { outcome: "timeout", handoff: r.handoff };
        }
        h = r.handoff; // claimed at the last moment: it is the gateway's now
        break;
      }
    }
    if (h?.state === "running") {
      spin.stop();
      say("picked up; transferring…");
      spin.set("transferring…");
      const doneBy = Date.now() + TRANSFER_TIMEOUT_MS;
      let beat = Date.now() + HEARTBEAT_MS;
      while ((h = await poll("running", Math.min(HEARTBEAT_MS, doneBy - Date.now())))?.state === "running") {
        if (o.signal?.aborted) {
          spin.stop();
          say(`Stopped waiting. The gateway is still transferring; check ${o.platform}.`);
          return { outcome: "timeout", handoff: h };
        }
        if (Date.now() >= doneBy) {
          spin.stop();
          say(o.style.yellow(`The gateway is taking unusually long; check ${o.platform}, the session may still arrive there.`));
          return { outcome: "timeout", handoff: h };
        }
        if (Date.now() >= beat && !o.progress.isTTY) {
          say(`still transferring… (${Math.round((Date.now() - (doneBy - TRANSFER_TIMEOUT_MS)) / 1000)} s)`);
          beat = Date.now() + HEARTBEAT_MS;
        }
      }
    }
    spin.stop();
    if (h?.state === "completed") {
      say(o.style.green(`Handed off: the session now lives in ${describeDestination(o.platform, h)}.`));
      say(`Come back to it here with: hermes-edge chat --resume ${o.session.id}`);
      return { outcome: "completed", handoff: h };
    }
    say(o.style.red(`Handoff failed: ${h?.error ?? "unknown error"}`));
    say("Your CLI session is intact.");
    return { outcome: "failed", handoff: h };
  } finally {
    spin.stop();
  }
}
