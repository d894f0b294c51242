import { describe, expect, it } from "vitest";
import { telegram } from "../worker/setup.ts";
import { gateway, type TestSocket } from "./helpers.ts";

/** A gateway's replies are CommonMark (the descriptor says so); the connector renders them as its own. */
let requests = 0;
async function outbound(s: TestSocket, action: Record<string, unknown>) {
  const requestId = `render-${++requests}`;
  s.send({ type: "outbound", requestId, platform: "telegram", action: { chat_id: "1002", ...action } });
  const frame = await s.next((f) => f.type === "outbound_result" && f.requestId === requestId);
  return frame.result as Record<string, unknown>;
}

describe("relayed replies are rendered like the edge's own", () => {
  it("a streaming send previews an open code block, a live edit hiding a marker is not complete, the final edit renders in full once", async () => {
    const s = await gateway();
    const sent = await outbound(s, { op: "send", content: "Here:\n\n```py\nprint(", final: false });
    expect(sent).toMatchObject({ success: true, complete: true });
    const id = String(sent.message_id);
    expect(telegram.called("/sendMessage").map((c) => [c.body.text, c.body.entities, c.body.parse_mode])).toEqual([
      ["Here:\n\nprint(", [{ type: "pre", offset: 7, length: 6, language: "py" }], undefined],
    ]);

    // "**" still open: the preview hides it, the same text as a final reply would show it.
    expect(await outbound(s, { op: "edit", message_id: id, content: "Total **", final: false })).toMatchObject({ success: true, complete: false });
    expect(telegram.called("/editMessageText").at(-1)!.body).toMatchObject({ text: "Total" });

    const final = { op: "edit", message_id: id, content: "**Done**, see `x`." };
    expect(await outbound(s, final)).toMatchObject({ success: true, complete: true, message_ids: [id] });
    expect(telegram.called("/editMessageText").at(-1)!.body).toMatchObject({
      text: "Done, see x.",
      entities: [
        { type: "bold", offset: 0, length: 4 },
        { type: "code", offset: 10, length: 1 },
      ],
    });
    // The same final content again: the message already shows it, so nothing is sent.
    const edits = telegram.called("/editMessageText").length;
    expect(await outbound(s, final)).toMatchObject({ success: true, complete: true });
    expect(telegram.called("/editMessageText")).toHaveLength(edits);
    s.ws.close(1000);
  });
});

describe("a send under an idempotency key is posted once", () => {
  it("the same key returns the message it posted, edited where the content changed; a recovered gateway's final send does not post the reply again", async () => {
    const s = await gateway();
    const key = "reply:turn-idem-1";
    const posts = () => telegram.called("/sendMessage").length;
    const edits = () => telegram.called("/editMessageText").length;
    const [p0, e0] = [posts(), edits()];

    const first = await outbound(s, { op: "send", content: "echo: hello", final: false, idempotency_key: key });
    expect(first).toMatchObject({ success: true });
    expect(posts()).toBe(p0 + 1);
    const id = String(first.message_id);

    // The gateway died before this result reached it, and sends the same live text again.
    expect(await outbound(s, { op: "send", content: "echo: hello", final: false, idempotency_key: key })).toEqual(first);
    expect([posts(), edits()]).toEqual([p0 + 1, e0]);

    // Its recovered turn delivers the whole reply under the same key: an edit of that message, no new post.
    const final = await outbound(s, { op: "send", content: "echo: hello, **all** of it", idempotency_key: key });
    expect(final).toMatchObject({ success: true, message_ids: [id], complete: true });
    expect(posts()).toBe(p0 + 1);
    expect(telegram.called("/editMessageText").at(-1)!.body).toMatchObject({ message_id: Number(id), text: "echo: hello, all of it" });

    // Another key, or none, posts as before.
    expect(String((await outbound(s, { op: "send", content: "echo: hello", idempotency_key: "reply:turn-idem-2" })).message_id)).not.toBe(id);
    await outbound(s, { op: "send", content: "no key" });
    await outbound(s, { op: "send", content: "no key" });
    expect(posts()).toBe(p0 + 4);
    s.ws.close(1000);
  });

  it("the same key sent for another chat posts there and leaves the first chat's message alone", async () => {
    const s = await gateway();
    const key = "reply:turn-idem-4";
    const first = await outbound(s, { op: "send", content: "for chat 1002", idempotency_key: key });
    const [posts, edits] = [telegram.called("/sendMessage").length, telegram.called("/editMessageText").length];
    const other = await outbound(s, { op: "send", chat_id: "1001", content: "for chat 1001", idempotency_key: key });
    expect(other).toMatchObject({ success: true });
    expect(telegram.called("/sendMessage")).toHaveLength(posts + 1);
    expect(telegram.called("/sendMessage").at(-1)!.body).toMatchObject({ chat_id: 1001, text: "for chat 1001" });
    expect(telegram.called("/editMessageText")).toHaveLength(edits);
    // And back in the first chat, the key still finds its own message.
    expect(await outbound(s, { op: "send", content: "for chat 1002", idempotency_key: key })).toEqual(first);
    s.ws.close(1000);
  });

  it("a key longer than 200 characters is refused as a malformed frame, and nothing is posted", async () => {
    const s = await gateway();
    const before = telegram.called("/sendMessage").length;
    s.send({
      type: "outbound",
      requestId: "idem-long",
      platform: "telegram",
      action: { op: "send", chat_id: "1002", content: "x", idempotency_key: "k".repeat(201) },
    });
    expect(await s.next("error")).toMatchObject({ code: "malformed_frame" });
    expect(telegram.called("/sendMessage")).toHaveLength(before);
    s.ws.close(1000);
  });
});
