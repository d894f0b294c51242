import type { ChatModel, ModelRequest, ModelResult } from "../../workers/agent/index.ts";
import type { ChannelCaps, ReplyChannel } from "../../workers/runtime/index.ts";
import { PlatformApiError, type Shown } from "../../workers/platforms/types.ts";

/** A held model call the test releases (or the turn's signal aborts). */
export interface Hold {
  started: boolean;
  release(): void;
}

type Script = { text: string[]; hold?: boolean };

/**
 * A scripted chat model for runtime tests: each call takes the next script (or echoes the
 * last user message), streams its pieces, and can be held open until the test releases it.
 */
export class ScriptModel implements ChatModel {
  readonly id = "script-model";
  readonly calls: ModelRequest[] = [];
  readonly holds: Hold[] = [];
  #scripts: Script[] = [];

  script(...s: Script[]): void {
    this.#scripts.push(...s);
  }

  async complete(req: ModelRequest): Promise<ModelResult> {
    this.calls.push(req);
    const users = req.messages.filter((m) => m.role === "user");
    const s = this.#scripts.shift() ?? { text: [`echo: ${users.at(-1)?.content ?? ""}`] };
    let content = "";
    const [first = "", ...rest] = s.text;
    content += first;
    if (first) void req.onText?.(first);
    if (s.hold) {
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      const hold: Hold = { started: true, release };
      this.holds.push(hold);
      const aborted = new Promise<void>((r) => req.signal?.addEventListener("abort", () => r(), { once: true }));
      await Promise.race([released, aborted]);
      if (req.signal?.aborted) return { content, toolCalls: [], finishReason: "interrupted" };
    }
    for (const piece of rest) {
      content += piece;
      void req.onText?.(piece);
    }
    return { content, toolCalls: [], finishReason: "stop", usage: { input: 10, output: content.length } };
  }
}

export interface ChannelCall {
  op: "show" | "post" | "typing";
  mode?: "live" | "final";
  text?: string;
  ids?: string[];
  /** The reply's idempotency key, when the runtime gave one. */
  key?: string;
}

/** A reply channel that records what it was asked to show and fails on request. */
export class FakeChannel implements ReplyChannel {
  readonly caps: ChannelCaps;
  readonly calls: ChannelCall[] = [];
  /** Errors thrown by the next show/post calls, in order. */
  readonly failures: Error[] = [];
  /** Throw this on every show (a platform that refuses for good). */
  failAlways: Error | null = null;
  /** The next show never answers (the platform hangs; the instance dies waiting). */
  hangNext = false;
  #next = 100;

  constructor(caps: Partial<ChannelCaps> = {}) {
    this.caps = { edits: true, typing: true, editIntervalMs: 1000, ...caps };
  }

  async typing(): Promise<void> {
    this.calls.push({ op: "typing" });
  }

  /** Replies longer than this show in one message only when final (as a platform's split does). */
  partLimit = Infinity;

  async show(markdown: string, ids: readonly string[], mode: "live" | "final", key?: string): Promise<Shown> {
    this.calls.push({ op: "show", mode, text: markdown, ids: [...ids], ...(key !== undefined ? { key } : {}) });
    if (this.hangNext) {
      this.hangNext = false;
      return new Promise<Shown>(() => undefined);
    }
    const f = this.failAlways ?? this.failures.shift();
    if (f) throw f;
    return { ids: ids.length > 0 ? [...ids] : [String(this.#next++)], complete: mode === "final" || markdown.length <= this.partLimit };
  }

  async post(markdown: string): Promise<string[]> {
    this.calls.push({ op: "post", text: markdown });
    const f = this.failures.shift();
    if (f) throw f;
    return [String(this.#next++)];
  }

  shows(mode?: "live" | "final"): ChannelCall[] {
    return this.calls.filter((c) => c.op === "show" && (!mode || c.mode === mode));
  }
}

export const rateLimited = (seconds: number) => new PlatformApiError("telegram", "rate_limited", "Too Many Requests", { status: 429, retryAfter: seconds });
export const forbidden = () => new PlatformApiError("telegram", "unauthorized", "Forbidden: bot was blocked by the user", { status: 403 });
export const unavailable = () => new PlatformApiError("telegram", "unavailable", "Bad Gateway", { status: 502 });
