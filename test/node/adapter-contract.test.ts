import { describe, expect, it } from "vitest";
import { PLATFORMS } from "../../workers/platforms/names.ts";
import { buildSessionKey } from "../../workers/platforms/session-key.ts";
import type { Ingest, PlatformAdapter, PlatformEvent } from "../../workers/platforms/types.ts";
import { ADAPTER_ENTRIES, type AdapterEntry, type Delivery } from "../support/adapter-contract.ts";
import { corpusBody, loadCorpus, type CorpusEntry } from "../support/corpus.ts";

/**
 * The adapter contract: one suite, run against every platform adapter (as vercel/chat's
 * `packages/tests/src/thread-id-contract.ts` runs one thread-id suite over its adapters).
 * A new platform passes it by adding its entry to test/support/adapter-contract.ts. The
 * reply-target codec has its own contract (test/node/target-codec-contract.test.ts); the
 * whole webhook path, signed, is replayed over the corpus in test/worker/corpus.suite.ts.
 */

const NOW = 1_700_000_000_000;
const enc = (s: string) => new TextEncoder().encode(s);
const headersOf = (d: Delivery) => new Headers({ "content-type": d.form ? "application/x-www-form-urlencoded" : "application/json" });

/**
 * A batch (WhatsApp: entries × changes × messages) as the single results the Worker takes in
 * one by one: each event, each note (answered, as a `respond` would be), or, when it holds
 * neither, one `ignore`.
 */
function flatten(ingest: Ingest): Ingest[] {
  if (ingest.kind !== "batch") return [ingest];
  const events = ingest.events.map((event): Ingest => ({ kind: "event", event }));
  const notes = ingest.notes.map((n): Ingest => ({ kind: "respond", response: new Response(n.text) }));
  const all = [...events, ...notes];
  return all.length > 0 ? all : [{ kind: "ignore", reason: ingest.log.join("; ") || "an empty batch" }];
}

function eventOf(adapter: PlatformAdapter, d: Delivery): PlatformEvent {
  const raw = adapter.ingest(d.body, headersOf(d));
  const flat = flatten(raw);
  const [ingest] = flat;
  if (flat.length !== 1 || ingest?.kind !== "event")
    throw new Error(`${adapter.name}: expected one event, got ${flat.map((i) => `${i.kind} (${"reason" in i ? i.reason : ""})`).join(", ")}`);
  return ingest.event;
}

const need = <T>(v: T | undefined, what: string): T => {
  if (v === undefined) throw new Error(`the entry declares ${what}, but does not spell it out`);
  return v;
};

async function answer(res: Response): Promise<{ status: number; json: unknown }> {
  const text = await res.text();
  return { status: res.status, json: text === "" ? null : (JSON.parse(text) as unknown) };
}

/** Length as the platform counts it. */
const measure = (text: string, unit: "utf16" | "codepoints") => (unit === "utf16" ? text.length : [...text].length);

/** What the adapter made of a corpus payload, against what the corpus says the Worker does with it. */
function fitsExpectation(expect: CorpusEntry["expect"], ingest: Ingest): boolean {
  if (ingest.kind === "event" && ingest.event.addressed === false) {
    // Not for the bot, but in a thread: the thread's Inbox decides (answered only where the bot was called in; the corpus notes say which).
    return expect === "silence" || (expect === "reply" && !!ingest.event.source.threadId);
  }
  switch (expect) {
    case "reply":
      return ingest.kind === "event" && ingest.event.kind === "message";
    case "answer":
      return ingest.kind === "respond" || ingest.kind === "suggest" || (ingest.kind === "event" && ingest.event.kind !== "message");
    case "silence":
      return ingest.kind === "ignore" || (ingest.kind === "event" && ingest.event.kind === "unknown_command");
    case "refuse":
      // The refusal is the intake's (the sender is not allowed): the adapter parses it as it would anyone's.
      return ingest.kind === "event" || ingest.kind === "respond";
  }
}

/**
 * Cases a platform cannot have (groups, threads, a webhook of its own) are not registered for
 * it rather than counted as skipped: in a green run "skipped" means a test could not run on
 * this machine (no Chromium), and the run says why.
 */
function adapterContract(entry: AdapterEntry): void {
  const [a, b] = entry.users;
  const { groups, threads } = entry.serves;
  const group = (user: string, chat: string) => need(entry.group, "groups")(user, chat);
  const inThread = (user: string, chat: string, thread: string) => need(entry.inThread, "threads")(user, chat, thread);
  const sampleThread = () => need(entry.sampleThread, "threads");

  describe("session keys", () => {
    it("keys a DM on the chat, whoever writes in it", () => {
      const { adapter } = entry.make();
      const src = eventOf(adapter, entry.dm(a)).source;
      expect(src.chatType).toBe("dm");
      expect(buildSessionKey(src)).toBe(entry.keys.dm);
      expect(buildSessionKey({ ...src, userId: "someone-else" })).toBe(buildSessionKey(src));
    });

    if (groups)
      it("gives each user of a group their own session outside threads, and one shared one with groupSessionsPerUser off", () => {
        const { adapter } = entry.make();
        const chat = entry.handoffParent;
        const key = need(entry.keys.group, "groups");
        const [x, y] = [eventOf(adapter, group(a, chat)).source, eventOf(adapter, group(b, chat)).source];
        expect(x.threadId ?? null).toBeNull();
        expect(buildSessionKey(x)).toBe(`${key}:${a}`);
        expect(buildSessionKey(y)).toBe(`${key}:${b}`);
        expect(buildSessionKey(x, { groupSessionsPerUser: false })).toBe(key);
        expect(buildSessionKey(x, { groupSessionsPerUser: false })).toBe(buildSessionKey(y, { groupSessionsPerUser: false }));
      });

    if (threads)
      it("shares one session per thread, and splits it per user only with threadSessionsPerUser", () => {
        const { adapter } = entry.make();
        const say = (user: string) => eventOf(adapter, inThread(user, entry.handoffParent, sampleThread())).source;
        const [x, y] = [say(a), say(b)];
        expect(buildSessionKey(x)).toBe(need(entry.keys.thread, "threads"));
        expect(buildSessionKey(y)).toBe(need(entry.keys.thread, "threads"));
        expect(buildSessionKey(x, { threadSessionsPerUser: true })).toBe(`${buildSessionKey(x)}:${a}`);
      });

    if (!threads)
      it("makes no handoff thread; a handoff's destination is the DM itself, keyed and answered as a real message there", async () => {
        const { adapter } = entry.make();
        expect(await adapter.createHandoffThread(entry.handoffParent, "Planning the trip")).toBeNull();
        const made = await adapter.destination(entry.handoffDm ?? entry.handoffParent, null);
        const real = eventOf(adapter, entry.dm(a));
        expect(made.source).toMatchObject({ chatType: "dm", threadId: null });
        expect(buildSessionKey({ ...made.source, userId: "the-cli" })).toBe(buildSessionKey(real.source));
        expect(adapter.describeTarget(made.target)).toEqual(adapter.describeTarget(real.target));
      });

    if (threads)
      it("gives a handed-off thread exactly the key a real message in it gets", async () => {
        const { adapter, allowThreadsIn } = entry.make();
        allowThreadsIn(entry.handoffParent);
        const thread = await adapter.createHandoffThread(entry.handoffParent, "Planning the trip");
        expect(thread, "createHandoffThread made no thread").not.toBeNull();
        const made = await adapter.destination(thread!.chatId, thread!.threadId);
        const real = eventOf(adapter, inThread(a, entry.handoffParent, thread!.threadId));
        expect(buildSessionKey({ ...made.source, userId: "the-cli" })).toBe(buildSessionKey(real.source));
        // And replies there go where a real message's would.
        expect(adapter.describeTarget(made.target)).toEqual(adapter.describeTarget(real.target));
      });

    it("derives a chat's destination from a message's reply target as the message parsed (relay outbound)", async () => {
      const { adapter } = entry.make();
      const real = eventOf(adapter, threads ? inThread(a, entry.handoffParent, sampleThread()) : entry.dm(a));
      const where = adapter.describeTarget(real.target);
      const derived = await adapter.destination(where.chatId, where.threadId);
      expect(buildSessionKey({ ...derived.source, userId: b })).toBe(buildSessionKey(real.source));
    });
  });

  if (entry.verifies === false)
    describe("no webhook", () => {
      it("refuses every delivery to its webhook URL as missing: its items arrive over a gateway's socket", async () => {
        const { adapter } = entry.make();
        expect(await adapter.verify(new Headers({ authorization: "Bearer x" }), enc(entry.dm(a).body), NOW)).toEqual({ ok: false, reason: "missing" });
      });
    });

  if (entry.verifies !== false)
    describe("signatures", () => {
      const body = entry.dm(a).body;

      it("accepts a genuine delivery, signed over the raw bytes", async () => {
        const { adapter } = entry.make();
        expect(await adapter.verify(new Headers(await entry.sign(body, NOW)), enc(body), NOW)).toEqual({ ok: true });
      });

      it("refuses a delivery without its signature headers as missing", async () => {
        const { adapter } = entry.make();
        const signed = await entry.sign(body, NOW);
        expect(await adapter.verify(new Headers(), enc(body), NOW)).toEqual({ ok: false, reason: "missing" });
        for (const h of entry.signatureHeaders) {
          const without = new Headers(signed);
          without.delete(h);
          expect(await adapter.verify(without, enc(body), NOW), h).toEqual({ ok: false, reason: "missing" });
        }
      });

      it("refuses a wrong secret or signature, and a body changed after signing", async () => {
        const { adapter } = entry.make();
        expect(await adapter.verify(new Headers(await entry.signWrong(body, NOW)), enc(body), NOW)).toEqual({ ok: false, reason: "bad_signature" });
        // A shared secret (Telegram's) covers no body; a signature (with the time or without: WhatsApp's) does.
        if (!entry.signsBody) return;
        const changed = await adapter.verify(new Headers(await entry.sign(body, NOW)), enc(`${body} `), NOW);
        expect(changed).toEqual({ ok: false, reason: "bad_signature" });
      });

      it("refuses a delivery signed too long ago or too far ahead, where the platform signs the time", async () => {
        const { adapter } = entry.make();
        const at = async (signedAt: number) => adapter.verify(new Headers(await entry.sign(body, signedAt)), enc(body), NOW);
        if (!entry.signsTime) {
          // Nothing signed carries a time: the clock cannot matter.
          expect(await at(NOW - 86_400_000)).toEqual({ ok: true });
          return;
        }
        expect(await at(NOW - 60_000)).toEqual({ ok: true });
        expect(await at(NOW - 3_600_000)).toEqual({ ok: false, reason: "stale" });
        expect(await at(NOW + 3_600_000)).toEqual({ ok: false, reason: "stale" });
      });
    });

  describe("corpus", () => {
    const corpus = loadCorpus().filter((e) => e.platform === entry.name);

    it("has payloads of this platform", () => {
      expect(corpus.length).toBeGreaterThan(0);
    });

    it.each(corpus.map((e) => [e.name, e] as const))("%s: parses without I/O into what the corpus expects, never as malformed", async (_, e) => {
      const { adapter, calls } = entry.make(e.bot ?? entry.corpusBot);
      // What parsing may know (the bot's own name), learnt the way the Worker learns it: after an acknowledgement.
      await adapter.warm?.();
      const before = calls.length;
      const { body, contentType } = corpusBody(e);
      const raw = adapter.ingest(body, new Headers({ "content-type": contentType }));
      expect(calls.length, "ingest called the platform").toBe(before);
      expect("malformed" in raw ? raw.malformed : undefined).toBeUndefined();
      expect(raw.kind === "batch", "a batch exactly where the platform batches").toBe(entry.batches);
      for (const ingest of flatten(raw)) {
        const got = ingest.kind === "event" ? { kind: ingest.event.kind, addressed: ingest.event.addressed } : ingest;
        expect(fitsExpectation(e.expect, ingest), `${e.expect}, got ${JSON.stringify(got)}`).toBe(true);
        if (ingest.kind !== "event") continue;
        expect(ingest.event.source.platform).toBe(entry.name);
        expect(adapter.targets.decode(ingest.event.target), "its reply target decodes").not.toBeNull();
      }
    });
  });

  describe("acknowledgements", () => {
    it("answers a message taken in, and a command taken in, in the platform's shape", async () => {
      const { adapter } = entry.make();
      const message = eventOf(adapter, entry.dm(a));
      expect(message.kind).toBe("message");
      expect(await answer(adapter.ack(message))).toEqual(entry.acks.message);
      const command = eventOf(adapter, entry.command(a));
      expect(command).toMatchObject({ kind: "command", name: "status" });
      expect(await answer(adapter.ack(command))).toEqual(entry.acks.command);
    });

    it("answers its handshake at once", async () => {
      if (!entry.handshake) return;
      const { adapter } = entry.make();
      const e = loadCorpus().find((x) => x.platform === entry.name && x.name === entry.handshake!.corpus)!;
      const { body, contentType } = corpusBody(e);
      const ingest = adapter.ingest(body, new Headers({ "content-type": contentType }));
      expect(ingest.kind).toBe("respond");
      if (ingest.kind === "respond") expect(await answer(ingest.response)).toEqual({ status: 200, json: entry.handshake.json });
    });

    it("answers inline only with a 2xx JSON body, cut to one message", async () => {
      const { adapter } = entry.make();
      const event = eventOf(adapter, entry.command(a));
      const inline = adapter.answerInline(event, "x".repeat(adapter.capabilities.maxMessageLength * 2));
      if (inline === null) return;
      expect(inline.status).toBe(200);
      expect(inline.headers.get("content-type")).toMatch(/application\/json/);
      expect((await inline.text()).length).toBeLessThan(adapter.capabilities.maxMessageLength * 2);
    });
  });

  describe("split limits", () => {
    // Words, emoji (two UTF-16 units, one code point) and line breaks, three messages' worth and more.
    const paragraph = "Grüße 👋🏽 from the edge: a sentence that goes on a while. ".repeat(8);

    it("shows a long reply as parts each within the platform's limit, in its own unit, losing nothing", async () => {
      const { adapter, calls } = entry.make();
      const { maxMessageLength: limit, lengthUnit: unit } = adapter.capabilities;
      const reply = Array.from({ length: Math.ceil((limit * 3.5) / paragraph.length) }, (_, i) => `${i} ${paragraph}`).join("\n\n");
      const target = eventOf(adapter, entry.dm(a)).target;
      const shown = await adapter.show(target, reply, [], "final");
      const texts = entry.shownTexts(calls);
      expect(shown.complete).toBe(true);
      expect(texts.length).toBeGreaterThanOrEqual(4);
      expect(shown.ids).toHaveLength(texts.length);
      for (const t of texts) expect(measure(t, unit)).toBeLessThanOrEqual(limit);
      expect(texts.join("").replace(/\s+/g, "")).toBe(reply.replace(/\s+/g, ""));
    });

    it("shows only the first part while the reply is still streaming (where messages can be edited)", async () => {
      const { adapter, calls } = entry.make();
      const reply = paragraph.repeat(Math.ceil((adapter.capabilities.maxMessageLength * 2) / paragraph.length));
      const target = eventOf(adapter, entry.dm(a)).target;
      const shown = await adapter.show(target, reply, [], "live");
      if (adapter.capabilities.edits) {
        expect(shown).toMatchObject({ complete: false });
        expect(entry.shownTexts(calls)).toHaveLength(1);
        return;
      }
      // No edits: what a live show posts stays; the final show posts only what it does not show yet.
      const live = entry.shownTexts(calls).length;
      expect(live).toBeGreaterThanOrEqual(1);
      const more = `${reply}\n\nOne more line.`;
      const final = await adapter.show(target, more, shown.ids, "final");
      expect(final.complete).toBe(true);
      expect(entry.shownTexts(calls).slice(live)).toEqual(["One more line."]);
    });
  });

  describe("capabilities", () => {
    it("declares its name, limits, edit pacing and command style, and what it declares it has", () => {
      const { adapter } = entry.make();
      const c = adapter.capabilities;
      expect(adapter.name).toBe(entry.name);
      expect(adapter.targets.platform).toBe(entry.name);
      expect(Number.isInteger(c.maxMessageLength) && c.maxMessageLength >= 1000).toBe(true);
      expect(["utf16", "codepoints"]).toContain(c.lengthUnit);
      expect(c.editIntervalMs.private).toBeGreaterThan(0);
      expect(c.editIntervalMs.group).toBeGreaterThanOrEqual(c.editIntervalMs.private);
      expect(typeof adapter.typing === "function", "typing: declared as it is implemented").toBe(c.typing);
      expect(c.threads, "the entry serves threads exactly where the adapter has them").toBe(threads);
      expect(adapter.commands.prefix).toMatch(/^\/\S*\s?$/);
      expect(adapter.commands.howToTalk.trim()).not.toBe("");
    });
  });
}

describe("adapter contract", () => {
  it("has an entry for every platform, and no other", () => {
    expect(ADAPTER_ENTRIES.map((e) => e.name).sort()).toEqual([...PLATFORMS].sort());
  });
});

for (const entry of ADAPTER_ENTRIES) describe(`adapter contract: ${entry.name}`, () => adapterContract(entry));
