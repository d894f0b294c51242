import { expect, it } from "vitest";
import type { ReplyTarget } from "../../workers/platforms/types.ts";
import { RESTART_FAILURE, SessionRuntime, UNDELIVERED_NOTE, type BusyPolicy, type RuntimeHost, type Sql } from "../../workers/runtime/index.ts";
import { ManualClock } from "./manual-clock.ts";
import { FakeChannel, forbidden, rateLimited, ScriptModel, unavailable } from "./runtime-fakes.ts";

const target: ReplyTarget = { platform: "telegram", private: true, ref: "chat-1" };

/** One runtime over `sql`, with a scripted model, a fake channel and a manual clock. */
export function rig(
  sql: Sql,
  opts: {
    policy?: BusyPolicy;
    model?: ScriptModel;
    channel?: FakeChannel;
    clock?: ManualClock;
    session?: string;
    attachments?: RuntimeHost["attachments"];
    onTurnStart?: RuntimeHost["onTurnStart"];
  } = {},
) {
  const model = opts.model ?? new ScriptModel();
  const channel = opts.channel ?? new FakeChannel();
  const clock = opts.clock ?? new ManualClock();
  const logs: string[] = [];
  SessionRuntime.migrate(sql);
  const host: RuntimeHost = {
    sql,
    session: opts.session ?? "s1",
    clock,
    busyPolicy: () => opts.policy ?? "queue",
    model: () => model,
    tools: async () => undefined,
    channel: () => channel,
    log: (l) => logs.push(l),
    ...(opts.attachments ? { attachments: opts.attachments } : {}),
    ...(opts.onTurnStart ? { onTurnStart: opts.onTurnStart } : {}),
  };
  const runtime = new SessionRuntime(host);
  const settle = async () => {
    for (let i = 0; i < 50; i++) await clock.advanceSettling(0);
  };
  /** Another instance over the same storage, as after a restart (its own clock: the dead one's timers never fire). */
  const again = (later = 0) => rig(sql, { ...opts, model, channel, clock: new ManualClock(clock.now() + later) });
  return { runtime, model, channel, clock, logs, settle, again };
}

const said = (r: ReturnType<typeof rig>) => r.runtime.transcript.load().map(({ message: m }) => `${m.role}:${m.content ?? ""}`);

/**
 * The turn runtime's contract, run against each storage it has (node:sqlite on the gateway,
 * a Durable Object's SQLite at the edge): ordering, busy policy, interrupts, durable final
 * delivery and recovery behave the same on both.
 */
export function runtimeContract(makeSql: () => Sql): void {
  it("runs queued turns one at a time, in order, and keeps the transcript", async () => {
    const r = rig(makeSql());
    r.model.script({ text: ["one "], hold: true });
    r.runtime.enqueue({ content: "first", origin: "platform", target, deliveryKey: "tg:1" });
    r.runtime.enqueue({ content: "second", origin: "platform", target, deliveryKey: "tg:2" });
    await r.settle();
    expect(r.model.calls).toHaveLength(1);
    r.model.holds[0]!.release();
    await r.settle();
    await r.runtime.idle();
    expect(said(r)).toEqual(["user:first", "assistant:one ", "user:second", "assistant:echo: second"]);
    expect(r.runtime.enqueue({ content: "first", origin: "platform", target, deliveryKey: "tg:1" })).toBeNull();
  });

  it("BUSY_POLICY=interrupt: a new message stops the running turn, which keeps its partial reply", async () => {
    const r = rig(makeSql(), { policy: "interrupt" });
    r.model.script({ text: ["partial "], hold: true });
    r.runtime.enqueue({ content: "long", origin: "platform", target, deliveryKey: "a" });
    await r.settle();
    r.runtime.enqueue({ content: "newer", origin: "platform", target, deliveryKey: "b" });
    await r.settle();
    await r.runtime.idle();
    const rows = r.runtime.transcript.rows().map((x) => [x.message.content, x.message.finish_reason ?? null]);
    expect(rows).toEqual([
      ["long", null],
      ["partial ", "interrupted"],
      ["newer", null],
      ["echo: newer", "stop"],
    ]);
  });

  it("interrupt with dropQueued stops the turn and drops the platform messages behind it, not a handoff's own turn", async () => {
    const r = rig(makeSql());
    r.model.script({ text: ["x"], hold: true });
    r.runtime.enqueue({ content: "running", origin: "platform", target, deliveryKey: "1" });
    r.runtime.enqueue({ content: "waiting", origin: "platform", target, deliveryKey: "2" });
    r.runtime.enqueue({ content: "handoff notice", origin: "internal", target, deliveryKey: "handoff:1" });
    await r.settle();
    expect(r.runtime.interrupt({ dropQueued: true })).toEqual({ interrupted: true, dropped: 1 });
    await r.settle();
    await r.runtime.idle();
    expect(said(r).filter((t) => t.startsWith("user:"))).toEqual(["user:running", "user:handoff notice"]);
  });

  it("streams by edits, then delivers the final reply, retrying after a 429's retry_after", async () => {
    const r = rig(makeSql());
    r.model.script({ text: ["Hello", " there"], hold: true });
    r.runtime.enqueue({ content: "hi", origin: "platform", target, deliveryKey: "k" });
    await r.settle();
    expect(r.channel.shows("live").map((c) => c.text)).toEqual(["Hello"]);
    r.channel.failures.push(rateLimited(7));
    r.model.holds[0]!.release();
    await r.settle();
    expect(r.channel.shows("final")).toHaveLength(1);
    expect(r.runtime.deliveries.all()).toHaveLength(1);
    await r.clock.advanceSettling(6_999);
    expect(r.channel.shows("final")).toHaveLength(1);
    await r.clock.advanceSettling(1);
    await r.runtime.idle();
    expect(r.channel.shows("final").map((c) => [c.text, c.ids])).toEqual([
      ["Hello there", ["100"]],
      ["Hello there", ["100"]],
    ]);
    expect(r.runtime.deliveries.all()).toEqual([]);
  });

  it("regression: a final edit that failed twice left a truncated reply; now it is retried, then posted anew with a note", async () => {
    const r = rig(makeSql());
    r.model.script({ text: ["Partial", " and the rest"], hold: true });
    r.runtime.enqueue({ content: "go", origin: "platform", target, deliveryKey: "k" });
    await r.settle();
    r.channel.failures.push(unavailable(), unavailable(), forbidden());
    r.model.holds[0]!.release();
    await r.settle(); // the turn ends (no time passes, so no live update is due) and the first final attempt fails
    for (let i = 0; i < 10; i++) await r.clock.advanceSettling(30_000);
    await r.runtime.idle();
    expect(r.channel.shows("final")).toHaveLength(3);
    const post = r.channel.calls.find((c) => c.op === "post")!;
    expect(post.text).toBe(`${UNDELIVERED_NOTE}\n\nPartial and the rest`);
    expect(r.runtime.deliveries.all()).toEqual([]);
  });

  it("a reply the platform refuses to the end is recorded as undelivered for its turn (as a later failed status is)", async () => {
    const r = rig(makeSql());
    r.channel.failAlways = forbidden();
    r.model.script({ text: ["never seen"] });
    r.runtime.enqueue({ content: "go", origin: "platform", target, deliveryKey: "k" });
    await r.settle();
    for (let i = 0; i < 10; i++) await r.clock.advanceSettling(30_000);
    await r.runtime.idle();
    expect(r.runtime.deliveries.all()).toEqual([]);
    expect([...r.runtime.sent.failures().values()]).toHaveLength(1);
  });

  it("a refusal during streaming stops the live updates (no attempt per token) and is logged once", async () => {
    const r = rig(makeSql());
    r.channel.failAlways = forbidden();
    r.model.script({ text: ["a"], hold: true });
    r.runtime.enqueue({ content: "go", origin: "platform", target, deliveryKey: "k" });
    await r.settle();
    for (let i = 0; i < 20; i++) await r.clock.advanceSettling(1000);
    expect(r.channel.shows("live")).toHaveLength(1);
    r.model.holds[0]!.release();
    await r.settle();
    await r.runtime.idle();
    expect(r.logs.filter((l) => l.includes("live update failed"))).toHaveLength(1);
  });

  it("regression: a crash while a final reply waited on a 429 lost it; a new instance delivers it", async () => {
    const sql = makeSql();
    const r = rig(sql);
    r.channel.failures.push(rateLimited(60));
    r.runtime.enqueue({ content: "hi", origin: "platform", target, deliveryKey: "k" });
    await r.settle();
    expect(r.runtime.deliveries.all()).toHaveLength(1);
    // The instance dies with the wait pending; the next one, a minute later, finds the delivery stored.
    const next = r.again(60_000);
    await next.runtime.pump();
    await next.runtime.idle();
    expect(next.runtime.deliveries.all()).toEqual([]);
    expect(r.channel.shows("final").at(-1)!.text).toBe("echo: hi");
  });

  it("regression: a recovered turn left the dead attempt's message behind; the re-run edits it, and stores the user message once", async () => {
    const sql = makeSql();
    const r = rig(sql);
    r.model.script({ text: ["dying "], hold: true });
    r.runtime.enqueue({ content: "question", origin: "platform", target, deliveryKey: "k" });
    await r.settle();
    expect(r.channel.shows("live")).toHaveLength(1);
    const next = r.again();
    await next.runtime.pump();
    await next.runtime.idle();
    expect(said(next).filter((t) => t === "user:question")).toHaveLength(1);
    // The re-run's reply shows in the dead attempt's message (live, in full: nothing left to deliver).
    expect(r.channel.shows().at(-1)).toMatchObject({ text: "echo: question", ids: ["100"] });
    expect(r.channel.calls.filter((c) => c.op === "show" && c.ids?.length === 0)).toHaveLength(1);
  });

  it("regression: an instance that died after storing the reply, before its delivery was recorded, had the model answer again (two replies); now the stored reply is delivered", async () => {
    const sql = makeSql();
    const r = rig(sql);
    r.model.script({ text: ["Hello", " there"], hold: true });
    r.runtime.enqueue({ content: "hi", origin: "platform", target, deliveryKey: "k" });
    await r.settle();
    // The last live edit is due at once and hangs: the reply is stored, the turn never ends here.
    await r.clock.advanceSettling(1000);
    r.channel.hangNext = true;
    r.model.holds[0]!.release();
    await r.settle();
    expect(said(r)).toEqual(["user:hi", "assistant:Hello there"]);
    expect(r.runtime.running).toBe(true);

    const next = r.again();
    await next.runtime.pump();
    await next.runtime.idle();
    expect(r.model.calls).toHaveLength(1);
    expect(said(next)).toEqual(["user:hi", "assistant:Hello there"]);
    expect(r.channel.shows().at(-1)).toMatchObject({ mode: "final", text: "Hello there", ids: ["100"] });
    expect(next.runtime.queue.all()).toEqual([]);
    expect(next.runtime.deliveries.all()).toEqual([]);
  });

  it("a turn's model request goes out before its user message is stored (a request sent after a write waits for its commit); the message is stored once, before the reply, and the API caller told", async () => {
    const r = rig(makeSql());
    const atCall: string[][] = [];
    const complete = r.model.complete.bind(r.model);
    r.model.complete = (req) => {
      atCall.push(said(r));
      return complete(req);
    };
    const whenSent: string[][] = [];
    const started = r.runtime.start({ content: "hello", origin: "api" }, { event() {}, end() {}, sent: () => void whenSent.push(said(r)) });
    expect(started.ok).toBe(true);
    await r.settle();
    await r.runtime.idle();
    expect(atCall).toEqual([[]]);
    expect(r.model.calls[0]!.messages.at(-1)).toEqual({ role: "user", content: "hello" });
    expect(whenSent).toEqual([["user:hello"]]);
    expect(said(r)).toEqual(["user:hello", "assistant:echo: hello"]);
  });

  it("a turn is marked started (its watchdog armed) before its attachments are read and its request goes out", async () => {
    const order: string[] = [];
    const r = rig(makeSql(), {
      onTurnStart: () => void order.push("started"),
      attachments: async () => (order.push("attachments"), null),
    });
    const complete = r.model.complete.bind(r.model);
    r.model.complete = (req) => (order.push("model"), complete(req));
    r.runtime.enqueue({ content: "hello", origin: "platform", target, deliveryKey: "tg:order" });
    await r.settle();
    await r.runtime.idle();
    expect(order).toEqual(["started", "attachments", "model"]);
  });

  it("a user message that cannot be stored stops its turn, and the session goes on (nothing left busy)", async () => {
    const sql = makeSql();
    let failures = 1;
    const failing: Sql = {
      ...sql,
      exec: (q, ...p) => {
        if (failures > 0 && q.startsWith("INSERT INTO messages") && p.includes("user")) {
          failures--;
          throw new Error("disk I/O error");
        }
        return sql.exec(q, ...p);
      },
    };
    const r = rig(failing);
    const ended: string[] = [];
    r.runtime.start({ content: "lost", origin: "api" }, { event() {}, end: (o) => void ended.push(o.finishReason) });
    await r.settle();
    await r.runtime.idle();
    expect(r.logs.some((l) => l.includes("its message could not be stored"))).toBe(true);
    expect(ended).toHaveLength(1);
    expect(r.runtime.busy).toBe(false);
    r.runtime.enqueue({ content: "next", origin: "platform", target, deliveryKey: "tg:after" });
    await r.settle();
    await r.runtime.idle();
    expect(said(r).slice(-2)).toEqual(["user:next", "assistant:echo: next"]);
  });

  it("a turn that fails before its model request could go out still stores its user message, once", async () => {
    const r = rig(makeSql());
    r.model.complete = () => {
      throw new Error("the model client broke before sending");
    };
    r.runtime.enqueue({ content: "hello", origin: "platform", target, deliveryKey: "tg:broken" });
    await r.settle();
    await r.runtime.idle();
    expect(said(r)).toEqual(["user:hello"]);
  });

  it("a turn's attachments are read before its message is stored (a note each, the model shown them); a re-run after a restart reads nothing again", async () => {
    const note = "[image a.png (image/png, 3 B): the image is attached]";
    const images = [{ type: "image_url" as const, image_url: { url: "data:image/png;base64,AAAA" } }];
    const reads: number[] = [];
    const attachments: RuntimeHost["attachments"] = async (_turn, earlier) => {
      reads.push(earlier.length);
      const records =
        earlier.length > 0
          ? [...earlier]
          : [
              {
                index: 0,
                kind: "image" as const,
                name: "a.png",
                mime: "image/png",
                size: 3,
                seconds: null,
                status: "image" as const,
                key: "k1",
                detail: null,
                note,
              },
            ];
      return { text: records.map((x) => x.note).join("\n"), images, records };
    };
    const sql = makeSql();
    const r = rig(sql, { attachments });
    r.model.script({ text: ["dying "], hold: true });
    const turn = r.runtime.enqueue({
      content: "look",
      origin: "platform",
      target,
      deliveryKey: "k",
      meta: { attachments: [{ kind: "image", name: "a.png", mime: "image/png", size: 3, ref: "f1" }] },
    })!;
    await r.settle();
    expect(r.model.calls[0]!.messages.at(-1)).toMatchObject({
      role: "user",
      content: `look\n\n${note}`,
      attached: { images, files: [{ kind: "image", status: "image", note, label: "image a.png (image/png, 3 B)" }] },
    });
    const next = r.again();
    await next.runtime.pump();
    await next.runtime.idle();
    expect(reads).toEqual([0, 1]);
    expect(said(next).filter((t) => t.startsWith("user:"))).toEqual([`user:look\n\n${note}`]);
    expect(next.runtime.attachments.forTurn(turn.turnId)).toMatchObject([{ name: "a.png", key: "k1", status: "image" }]);
    expect(r.model.calls.at(-1)!.messages.at(-1)!.attached?.images).toEqual(images);
  });

  it("a turn that died on its second attempt ends with a visible failure instead of a third run", async () => {
    const sql = makeSql();
    const r = rig(sql);
    r.model.script({ text: ["a"], hold: true }, { text: ["b"], hold: true });
    r.runtime.enqueue({ content: "cursed", origin: "platform", target, deliveryKey: "k" });
    await r.settle();
    const second = r.again();
    void second.runtime.pump();
    await r.settle();
    const third = r.again();
    await third.runtime.pump();
    await third.runtime.idle();
    expect(r.model.calls).toHaveLength(2);
    expect(r.channel.shows("final").at(-1)!.text).toBe(RESTART_FAILURE);
    expect(said(third).at(-1)).toBe(`assistant:${RESTART_FAILURE}`);
  });

  it("keeps sessions apart in one storage: an interrupt touches only its own session", async () => {
    const sql = makeSql();
    const a = rig(sql, { session: "a" });
    const b = rig(sql, { session: "b", clock: a.clock });
    a.model.script({ text: ["a"], hold: true });
    b.model.script({ text: ["b"], hold: true });
    a.runtime.enqueue({ content: "for a", origin: "platform", target, deliveryKey: "ka" });
    b.runtime.enqueue({ content: "for b", origin: "platform", target, deliveryKey: "kb" });
    await a.settle();
    expect(a.runtime.interrupt().interrupted).toBe(true);
    await a.settle();
    expect(b.runtime.running).toBe(true);
    b.model.holds[0]!.release();
    await a.settle();
    await Promise.all([a.runtime.idle(), b.runtime.idle()]);
    expect(b.runtime.transcript.rows().at(-1)!.message.finish_reason).toBe("stop");
    expect(a.runtime.transcript.rows().at(-1)!.message.finish_reason).toBe("interrupted");
  });
}
