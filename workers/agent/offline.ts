import { abortableSleep, type ChatModel, type ModelRequest, type ModelResult } from "./model.ts";
import type { AttachedFile, ChatMessage } from "./types.ts";

/** Model id stored on sessions that run on the built-in model. */
export const OFFLINE_MODEL_ID = "offline";

/** First line of every offline reply: says plainly what this is and how to get a real model. */
export const OFFLINE_NOTICE =
  "(offline model) No language model is configured, so this reply is canned. To use a real one, set LLM_BASE_URL to an OpenAI-compatible endpoint, LLM_MODEL, and LLM_API_KEY if it needs one (locally in .dev.vars, deployed with `wrangler secret put`).";
const SHORT_NOTICE = "(offline model)";

export interface OfflineOptions {
  /** Pause between streamed words, so the reply visibly streams and can be interrupted. */
  delayMs?: number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

function textOf(m: ChatMessage): string {
  return typeof m.content === "string" ? m.content.trim() : "";
}

function clip(text: string, max: number): string {
  const one = text.replace(/\s+/g, " ");
  return one.length <= max ? one : `${one.slice(0, max - 1)}…`;
}

const HOW: Record<string, string> = {
  image: "I cannot see images",
  inlined: "I cannot read it, though a real model would get its text",
  transcribed: "a real model would get its transcript",
  unheard: "I cannot hear it, and no speech-to-text is configured (LLM_TRANSCRIBE_MODEL)",
  described: "only its name, type and size are known",
  too_large: "it was too large to fetch (ATTACHMENT_MAX_BYTES)",
  failed: "it could not be fetched or read",
};

/** "You sent 2 files: image photo.jpg (image/jpeg, 88 KB), which I cannot see; …" */
function sentFiles(files: readonly AttachedFile[]): string {
  const each = files.map((f) => `${f.label}, ${HOW[f.status] ?? "it is described only"}`);
  return `You sent ${files.length === 1 ? "a file" : `${files.length} files`}: ${each.join("; ")}.`;
}

/**
 * The reply the offline model gives to a transcript. Deterministic: it depends on the
 * conversation only, so tests and handoff summaries work without keys.
 */
export function offlineReply(messages: readonly ChatMessage[]): string {
  const users = messages.filter((m) => m.role === "user" && textOf(m) !== "");
  const last = users[users.length - 1];
  const earlier = users.slice(0, -1).map(textOf);
  const toldBefore = messages.some((m) => m.role === "assistant" && textOf(m).startsWith(SHORT_NOTICE));
  const lines = [toldBefore ? SHORT_NOTICE : OFFLINE_NOTICE];
  if (!last) {
    lines.push("There is nothing in this conversation yet.");
    return lines.join("\n\n");
  }
  const files = last.attached?.files ?? [];
  // The notes about attachments are in the text; the offline model lists the files instead.
  const said = files.reduce((t, f) => t.replace(f.note, ""), textOf(last)).trim();
  if (files.length > 0) {
    lines.push(sentFiles(files));
    if (said !== "") lines.push(`You said: "${clip(said, 200)}".`);
    return lines.join("\n\n");
  }
  if (/summar/i.test(said)) {
    if (earlier.length === 0) {
      lines.push("Summary: this conversation has no earlier messages; it starts here.");
    } else {
      const shown = earlier.slice(-5);
      const list = shown.map((t, i) => `${earlier.length - shown.length + i + 1}. ${clip(t, 100)}`).join("\n");
      lines.push(`Summary: so far you sent ${earlier.length} message${earlier.length === 1 ? "" : "s"}:\n${list}`);
    }
    return lines.join("\n\n");
  }
  lines.push(`You said: "${clip(said, 200)}".`);
  const previous = earlier.at(-1);
  if (previous !== undefined) {
    lines.push(`Before that you said: "${clip(previous, 120)}" (${users.length} messages from you so far).`);
  }
  return lines.join("\n\n");
}

/** The built-in model used when LLM_BASE_URL is unset. It never calls tools or the network. */
export class OfflineModel implements ChatModel {
  readonly id = OFFLINE_MODEL_ID;
  readonly #delayMs: number;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;

  constructor(opts: OfflineOptions = {}) {
    this.#delayMs = opts.delayMs ?? 15;
    this.#sleep = opts.sleep ?? abortableSleep;
  }

  async complete(req: ModelRequest): Promise<ModelResult> {
    const text = offlineReply(req.messages);
    const pieces = text.match(/\S+\s*/g) ?? [];
    let sent = "";
    for (const piece of pieces) {
      if (req.signal?.aborted) return { content: sent, toolCalls: [], finishReason: "interrupted" };
      if (this.#delayMs > 0 && sent !== "") {
        try {
          await this.#sleep(this.#delayMs, req.signal);
        } catch {
          return { content: sent, toolCalls: [], finishReason: "interrupted" };
        }
      }
      sent += piece;
      // A reader's pause is honoured; awaiting nothing would hand a platform's live reply each word apart.
      const pause = req.onText?.(piece);
      if (pause) await pause;
    }
    const input = req.messages.reduce((n, m) => n + Math.ceil((m.content?.length ?? 0) / 4), 0);
    return { content: sent, toolCalls: [], finishReason: "stop", usage: { input, output: Math.ceil(sent.length / 4) } };
  }
}
