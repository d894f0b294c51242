import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { imagesOf, lastUserText } from "../support/fake-llm.ts";
import { dataUrl, PNG } from "../support/files.ts";
import { dc, sl, tg } from "../support/fixtures.ts";
import { SLACK_TEST } from "../support/signing.ts";
import { messages } from "./helpers.ts";
import { routeOf, settle, toDiscord, toSlack, toTelegram } from "./platform-helpers.ts";
import { discordCdn, llm, slack, slackFiles, telegram } from "./setup.ts";

const photo = (fileId: string, size = PNG.byteLength) => [
  { file_id: `${fileId}-thumb`, file_unique_id: "t", width: 90, height: 90, file_size: 100 },
  { file_id: fileId, file_unique_id: "p", width: 800, height: 600, file_size: size },
];

/** A DM from allowed user 1001 in a chat of its own (other files' tests talk in chat 1001). */
let chats = 5_100;
const dmFile = (extra: Record<string, unknown>) => {
  const chatId = ++chats;
  return { chatId, update: tg.dm("", 1001, { chat: { id: chatId, type: "private", first_name: "u" }, ...extra }) };
};

type ApiMessage = { role: string; content: string; attachments: Array<{ kind: string; name: string | null; status: string; kept: boolean }> };

async function transcriptOf(key: string): Promise<ApiMessage[]> {
  return (await messages((await routeOf(key))!)) as unknown as ApiMessage[];
}

describe("attachments reach the agent", () => {
  it("a Telegram photo without caption: fetched once with the bot's credentials, kept in R2, shown to the model as an image part, listed by the API", async () => {
    telegram.serveFile("ph-1", PNG, "application/octet-stream", "photos/file_1.jpg");
    const { chatId, update } = dmFile({ photo: photo("ph-1") });
    await toTelegram(update);
    await settle();
    expect(telegram.called("/getFile").map((c) => c.body.file_id)).toEqual(["ph-1"]);
    const sent = llm.calls.at(-1)!.body.messages.at(-1)!;
    expect(imagesOf(sent.content)).toEqual([dataUrl("image/png", PNG)]);
    expect(lastUserText(llm.calls.at(-1)!.body)).toMatch(/^\[image \(image\/png, 70 B\): the image is attached\]$/);
    expect(telegram.texts(chatId).at(-1)).toMatch(/^echo: \[image/);
    const user = (await transcriptOf(`agent:main:telegram:dm:${chatId}`)).filter((m) => m.role === "user").at(-1)!;
    expect(user.attachments).toEqual([
      { kind: "image", name: null, mime: "image/png", size: PNG.byteLength, seconds: null, status: "image", kept: true, detail: null },
    ]);
    const listed = await env.FILES.list({ prefix: `sessions/${await routeOf(`agent:main:telegram:dm:${chatId}`)}/` });
    expect(listed.objects.map((o) => o.size)).toContain(PNG.byteLength);
  });

  it("a text document's words are inlined under the caption, the caption first", async () => {
    telegram.serveFile("doc-md", "# Notes\n\nship it on Friday", "text/markdown");
    await toTelegram(
      dmFile({
        caption: "can you review this?",
        document: { file_id: "doc-md", file_unique_id: "d", file_name: "NOTES.md", mime_type: "text/markdown", file_size: 26 },
      }).update,
    );
    await settle();
    const text = lastUserText(llm.calls.at(-1)!.body);
    expect(text).toBe("can you review this?\n\n[document NOTES.md (text/markdown, 26 B), its text:]\n```\n# Notes\n\nship it on Friday\n```");
  });

  it("a voice note with no speech-to-text configured: the agent is told it cannot hear it", async () => {
    telegram.serveFile("voice-1", new Uint8Array([0x4f, 0x67, 0x67, 0x53, 1, 2, 3]), "audio/ogg");
    await toTelegram(dmFile({ voice: { file_id: "voice-1", file_unique_id: "v", duration: 2, mime_type: "audio/ogg", file_size: 7 } }).update);
    await settle();
    expect(lastUserText(llm.calls.at(-1)!.body)).toContain("[voice note (2 s, audio/ogg, 7 B): this agent cannot hear audio (no speech-to-text is configured)");
    expect(llm.transcriptions).toEqual([]);
  });

  it("a file over ATTACHMENT_MAX_BYTES is described, not fetched; the words still arrive", async () => {
    await toTelegram(
      dmFile({
        caption: "the big one",
        document: { file_id: "huge", file_unique_id: "h", file_name: "dump.tar", mime_type: "application/x-tar", file_size: 50 * 1024 * 1024 },
      }).update,
    );
    await settle();
    expect(telegram.called("/getFile")).toEqual([]);
    expect(lastUserText(llm.calls.at(-1)!.body)).toBe(
      "the big one\n\n[document dump.tar (application/x-tar, 50 MB): larger than the 10 MB this agent fetches, so it was not read]",
    );
  });

  it("regression: a failed download lost the message's words (they arrive, and the failure is said)", async () => {
    const { chatId, update } = dmFile({
      caption: "what is in here?",
      document: { file_id: "gone", file_unique_id: "g", file_name: "a.pdf", mime_type: "application/pdf", file_size: 10 },
    });
    await toTelegram(update);
    await settle();
    const text = lastUserText(llm.calls.at(-1)!.body);
    expect(text).toMatch(
      /^what is in here\?\n\n\[document a\.pdf \(application\/pdf, 10 B\): it could not be fetched \(Telegram getFile failed: .*invalid file_id.*\), so its content is not known\]$/,
    );
    expect(text).not.toContain("TEST-TOKEN");
    expect(telegram.texts(chatId).at(-1)).toContain("echo: what is in here?");
  });

  it("a Slack file shared in a DM (subtype file_share) is fetched from url_private with the bot token", async () => {
    slackFiles.serve("/files-pri/T0TEAM-F1/notes.txt", "remember the milk", "text/plain");
    const dm = sl.dm("see attached", "U1001", "D5001");
    Object.assign(dm.event, {
      subtype: "file_share",
      files: [{ id: "F1", name: "notes.txt", mimetype: "text/plain", size: 17, url_private: "https://files.slack.test/files-pri/T0TEAM-F1/notes.txt" }],
    });
    await toSlack(dm);
    await settle();
    expect(slackFiles.requests).toEqual([{ path: "/files-pri/T0TEAM-F1/notes.txt", authorization: `Bearer ${SLACK_TEST.token}` }]);
    expect(lastUserText(llm.calls.at(-1)!.body)).toContain("remember the milk");
    expect(slack.texts("D5001").at(-1)).toContain("echo: see attached");
  });

  it("a Slack url_private off Slack's host never gets the token", async () => {
    const dm = sl.dm("look", "U1001", "D5002");
    Object.assign(dm.event, {
      subtype: "file_share",
      files: [{ id: "F2", name: "x.txt", mimetype: "text/plain", size: 3, url_private: "https://evil.test/x.txt" }],
    });
    await toSlack(dm);
    await settle();
    expect(lastUserText(llm.calls.at(-1)!.body)).toContain("it could not be fetched (its URL is not on Slack's file host)");
  });

  it("Discord /ask with a file option: the CDN URL is fetched and the image shown", async () => {
    discordCdn.serve("/attachments/1/2/cat.png?ex=1&is=2&hm=3", PNG, "image/png");
    const ask = dc.command("ask", { prompt: "what is this?" }, { channelId: "3201" });
    ask.data.options.push({ name: "file", type: 11, value: "777" } as never);
    Object.assign(ask.data, {
      resolved: {
        attachments: {
          "777": {
            id: "777",
            filename: "cat.png",
            content_type: "image/png",
            size: PNG.byteLength,
            url: "https://cdn.discord.test/attachments/1/2/cat.png?ex=1&is=2&hm=3",
          },
        },
      },
    });
    expect(await (await toDiscord(ask)).json()).toEqual({ type: 5 });
    await settle();
    expect(discordCdn.requests.map((r) => r.authorization)).toEqual([null]);
    expect(imagesOf(llm.calls.at(-1)!.body.messages.at(-1)!.content)).toHaveLength(1);
    expect(lastUserText(llm.calls.at(-1)!.body)).toBe("what is this?\n\n[image cat.png (image/png, 70 B): the image is attached]");
  });
});
