/**
 * What a user of each platform sees, built from the calls the Worker makes to the loopback
 * fakes: every message the bot posted, with its text after the last edit the platform
 * accepted. A call counts only once the fake answered it with success; a call held open
 * when the Worker died never reached the user (unless held "applied": the platform took
 * it and only the answer was lost). Editing a Telegram message to the text it already has
 * is refused as the Bot API does ("message is not modified").
 */

/** A platform call as the view saw it. */
export interface SeenCall {
  method: string;
  path: string;
  body: Record<string, unknown>;
  /** When it arrived (ms since the epoch). */
  at: number;
}

/** One message the bot posted, as it shows now. */
export interface Posted {
  /** The conversation it is in (a chat, a channel, or a Discord interaction's token). */
  chat: string;
  id: string;
  /** As the platform received it (rendered: Discord escapes, Slack entities). */
  text: string;
  /** The words a user reads: the rendering's escapes undone (see {@link plainOf}). */
  plain: string;
  /** How many accepted edits it had. */
  edits: number;
}

/** A call held open by the fake until released, or until the Worker hangs up. */
export interface Held {
  /** Resolves with the call once it arrived. */
  arrived: Promise<SeenCall>;
  /** Lets the fake answer it (with success). */
  release(): void;
}

/**
 * The words a user reads in a rendered text: Discord's backslash escapes and Slack's three
 * entities undone (Telegram formats by entities, so its text is already plain), trimmed.
 * The bench's messages are plain words, so this equals the Markdown the model wrote.
 */
export function plainOf(platform: string, text: string): string {
  if (platform === "discord") return text.replace(/\\(.)/g, "$1").trim();
  if (platform === "slack") return text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&").trim();
  return text.trim();
}

type Effect = { kind: "post"; chat: string; text: string } | { kind: "edit"; chat: string; id: string; text: string } | null;

interface Rule {
  pred: (c: SeenCall) => boolean;
  hold?: { applied: boolean; arrived: (c: SeenCall) => void; released: Promise<void> };
  fail?: { status: number; body: unknown; headers?: Record<string, string> };
}

function parseBody(text: string, type: string): Record<string, unknown> {
  if (!text) return {};
  if (type.includes("application/x-www-form-urlencoded")) return Object.fromEntries(new URLSearchParams(text));
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The effect of a call on what users see, per platform. */
function effectOf(platform: string, c: SeenCall): Effect {
  const p = c.path.replace(/\?.*$/, "");
  if (platform === "telegram") {
    if (p.endsWith("/sendMessage")) return { kind: "post", chat: String(c.body.chat_id), text: String(c.body.text ?? "") };
    if (p.endsWith("/editMessageText")) return { kind: "edit", chat: String(c.body.chat_id), id: String(c.body.message_id), text: String(c.body.text ?? "") };
    return null;
  }
  if (platform === "discord") {
    const hook = /\/webhooks\/\d+\/([^/]+)(?:\/messages\/([^/]+))?$/.exec(p);
    if (hook && c.method === "PATCH" && hook[2])
      return { kind: "edit", chat: `itok:${hook[1]}`, id: hook[2] === "@original" ? "@original" : hook[2], text: String(c.body.content ?? "") };
    if (hook && c.method === "POST" && !hook[2]) return { kind: "post", chat: `itok:${hook[1]}`, text: String(c.body.content ?? "") };
    const ch = /\/channels\/(\d+)\/messages(?:\/(\d+))?$/.exec(p);
    if (ch && c.method === "POST" && !ch[2]) return { kind: "post", chat: ch[1]!, text: String(c.body.content ?? "") };
    if (ch && c.method === "PATCH" && ch[2]) return { kind: "edit", chat: ch[1]!, id: ch[2], text: String(c.body.content ?? "") };
    return null;
  }
  if (p.endsWith("/chat.postMessage")) return { kind: "post", chat: String(c.body.channel), text: String(c.body.text ?? "") };
  if (p.endsWith("/chat.update")) return { kind: "edit", chat: String(c.body.channel), id: String(c.body.ts), text: String(c.body.text ?? "") };
  return null;
}

/** The id the platform gave a posted message, from its answer. */
function postedId(platform: string, answer: unknown): string | null {
  const a = answer as Record<string, unknown> | null;
  if (!a) return null;
  if (platform === "telegram") return a.ok ? String((a.result as Record<string, unknown>).message_id) : null;
  if (platform === "discord") return a.id !== undefined ? String(a.id) : null;
  return a.ok ? String(a.ts) : null;
}

/** A fake platform API (`test/support/fake-platforms.ts`) seen through the user's eyes. */
export class PlatformView {
  readonly calls: SeenCall[] = [];
  readonly #posted: Posted[] = [];
  #rules: Rule[] = [];
  #lastCall = Date.now();
  #waiters: Array<{ chat: string; text: string; resolve: () => void }> = [];
  /** Releases of the holds not yet released (a reset lets them all go). */
  #holds: Array<() => void> = [];

  readonly platform: "telegram" | "discord" | "slack";
  readonly fake: { handle(req: Request): Promise<Response>; reset(): void };

  constructor(platform: "telegram" | "discord" | "slack", fake: { handle(req: Request): Promise<Response>; reset(): void }) {
    this.platform = platform;
    this.fake = fake;
  }

  /** Every message the bot posted in `chat`, in order, as it shows now. */
  messages(chat: string | number): Posted[] {
    return this.#posted.filter((m) => m.chat === String(chat));
  }

  /** Resolves the moment a message in `chat` reads `text` (an event, not a poll: a scenario acts on it at once). */
  shows(chat: string | number, text: string): Promise<void> {
    const want = text.trim();
    if (this.messages(chat).some((m) => m.plain === want)) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ chat: String(chat), text: want, resolve }));
  }

  /** When the last call arrived (a scenario waits for the platform to go quiet). */
  get lastCall(): number {
    return this.#lastCall;
  }

  /** Holds the next call matching `pred` open. `applied`: the platform takes it at once and only its answer waits. */
  hold(pred: (c: SeenCall) => boolean, opts: { applied?: boolean } = {}): Held {
    let arrived!: (c: SeenCall) => void;
    let release!: () => void;
    const arrivedP = new Promise<SeenCall>((r) => (arrived = r));
    const released = new Promise<void>((r) => (release = r));
    this.#rules.push({ pred, hold: { applied: opts.applied ?? false, arrived, released } });
    this.#holds.push(release);
    return { arrived: arrivedP, release };
  }

  /** Answers the next call matching `pred` with this failure (the platform saw nothing). */
  failNext(pred: (c: SeenCall) => boolean, status: number, body: unknown, headers?: Record<string, string>): void {
    this.#rules.push({ pred, fail: { status, body, ...(headers ? { headers } : {}) } });
  }

  /** Forgets what was posted and every rule (between scenarios). */
  reset(): void {
    this.calls.length = 0;
    this.#posted.length = 0;
    this.#rules = [];
    this.#waiters = [];
    for (const release of this.#holds.splice(0)) release();
    this.fake.reset();
  }

  async handle(req: Request): Promise<Response> {
    const text = req.method === "GET" || req.method === "HEAD" ? "" : await req.text();
    const url = new URL(req.url);
    const call: SeenCall = {
      method: req.method,
      path: url.pathname + url.search,
      body: parseBody(text, req.headers.get("content-type") ?? ""),
      at: Date.now(),
    };
    this.calls.push(call);
    this.#lastCall = Date.now();
    const effect = effectOf(this.platform, call);
    const i = this.#rules.findIndex((r) => r.pred(call));
    const rule = i >= 0 ? this.#rules.splice(i, 1)[0]! : null;
    if (rule?.fail) return Response.json(rule.fail.body, { status: rule.fail.status, ...(rule.fail.headers ? { headers: rule.fail.headers } : {}) });
    const forward = () => this.fake.handle(new Request(req.url, { method: req.method, headers: req.headers, ...(text ? { body: text } : {}) }));
    if (rule?.hold) {
      const early = rule.hold.applied && effect?.kind === "edit";
      if (early) this.#apply(effect, null);
      rule.hold.arrived(call);
      const hungUp = new Promise<"gone">((r) => (req.signal.aborted ? r("gone") : req.signal.addEventListener("abort", () => r("gone"), { once: true })));
      if ((await Promise.race([rule.hold.released.then(() => "released" as const), hungUp])) === "gone") return new Response(null, { status: 499 });
      if (early) return forward();
    }
    if (effect?.kind === "edit" && this.platform === "telegram") {
      const m = this.#posted.find((p) => p.chat === effect.chat && p.id === effect.id);
      if (m && m.text === effect.text) {
        return Response.json(
          {
            ok: false,
            error_code: 400,
            description:
              "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message",
          },
          { status: 400 },
        );
      }
    }
    const res = await forward();
    if (!res.ok || !effect) return res;
    const answer = (await res
      .clone()
      .json()
      .catch(() => null)) as unknown;
    this.#apply(effect, answer);
    return res;
  }

  #apply(effect: NonNullable<Effect>, answer: unknown): void {
    this.#applyOnly(effect, answer);
    const plain = plainOf(this.platform, effect.text);
    for (const w of this.#waiters.filter((x) => x.chat === effect.chat && x.text === plain)) {
      this.#waiters.splice(this.#waiters.indexOf(w), 1);
      w.resolve();
    }
  }

  #applyOnly(effect: NonNullable<Effect>, answer: unknown): void {
    if (effect.kind === "post") {
      const id = postedId(this.platform, answer);
      if (id !== null) this.#posted.push({ chat: effect.chat, id, text: effect.text, plain: plainOf(this.platform, effect.text), edits: 0 });
      return;
    }
    const m = this.#posted.find((p) => p.chat === effect.chat && p.id === effect.id);
    if (m) {
      m.text = effect.text;
      m.plain = plainOf(this.platform, effect.text);
      m.edits++;
    } else if (effect.id === "@original") {
      // A deferred interaction's first answer: the edit of @original is its message.
      this.#posted.push({ chat: effect.chat, id: "@original", text: effect.text, plain: plainOf(this.platform, effect.text), edits: 1 });
    }
  }
}
