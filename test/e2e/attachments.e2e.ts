import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { harness, type Harness } from "../support/e2e.ts";
import { imagesOf, lastUserText } from "../support/fake-llm.ts";
import { dataUrl, pdfWithText, PNG } from "../support/files.ts";
import { dc, sl, tg } from "../support/fixtures.ts";
import { discordHeaders, slackHeaders, SLACK_TEST, telegramHeaders } from "../support/signing.ts";

/**
 * Attachments end to end: signed webhooks into the e2e Worker (the deploy bundle in miniflare) (local R2), files
 * served by the loopback fakes (Telegram getFile and its file server, Slack url_private,
 * Discord's CDN), the model shown images as content parts and documents as text.
 */
let h: Harness;

beforeAll(async () => {
  h = await harness();
});

beforeEach(() => h.reset());

const post = (platform: string, body: string, headers: Record<string, string>) =>
  fetch(`${h.worker.url}/webhooks/${platform}`, { method: "POST", headers, body });
const api = async <T>(path: string): Promise<T> =>
  (await (await fetch(`${h.worker.url}${path}`, { headers: { authorization: `Bearer ${h.worker.token}` } })).json()) as T;

describe("attachments end to end", () => {
  it("Telegram: a photo and a PDF reach the model (an image part, the PDF's text), are kept, and the API lists them", async () => {
    h.telegram.serveFile("e2e-photo", PNG, "application/octet-stream", "photos/e2e.jpg");
    h.telegram.serveFile("e2e-pdf", pdfWithText("the e2e quarterly numbers"), "application/octet-stream", "documents/e2e.pdf");
    const photo = tg.dm("", 1001, { photo: [{ file_id: "e2e-photo", file_unique_id: "p", width: 1, height: 1, file_size: PNG.byteLength }] });
    expect((await post("telegram", JSON.stringify(photo), telegramHeaders())).status).toBe(200);
    // Streamed: a live preview may show a half-typed "[" as nothing yet; the final text has it.
    const shown = await h.telegram.waitFor((c) => /\/(sendMessage|editMessageText)$/.test(c.path) && String(c.body.text).startsWith("echo: [image"));
    const call = h.llm.calls.find((c) => imagesOf(c.body.messages.at(-1)!.content).length > 0)!;
    expect(imagesOf(call.body.messages.at(-1)!.content)).toEqual([dataUrl("image/png", PNG)]);
    expect(shown.body.chat_id).toBe(1001);

    const doc = tg.dm("", 1002, {
      caption: "summarise the report",
      document: { file_id: "e2e-pdf", file_unique_id: "d", file_name: "report.pdf", mime_type: "application/pdf", file_size: 900 },
    });
    await post("telegram", JSON.stringify(doc), telegramHeaders());
    await h.telegram.waitFor((c) => /\/(sendMessage|editMessageText)$/.test(c.path) && String(c.body.text).startsWith("echo: summarise the report"));
    const pdfCall = h.llm.calls.find((c) => lastUserText(c.body).startsWith("summarise the report"))!;
    expect(lastUserText(pdfCall.body)).toContain("the e2e quarterly numbers");

    const { sessions } = await api<{ sessions: Array<{ id: string; chat_id: string | null; source: string }> }>("/v1/sessions?source=telegram&limit=200");
    const id = sessions.find((s) => s.chat_id === "1002")!.id;
    const { messages } = await api<{ messages: Array<{ role: string; attachments: Array<{ name: string; status: string; kept: boolean }> }> }>(
      `/v1/sessions/${id}/messages`,
    );
    expect(messages.filter((m) => m.role === "user").at(-1)!.attachments).toMatchObject([{ name: "report.pdf", status: "inlined", kept: true }]);
  });

  it("Slack: a file shared in a DM is fetched from url_private with the bot token", async () => {
    h.slackFiles.serve("/files-pri/T0-F9/todo.txt", "buy more coffee", "text/plain");
    const dm = sl.dm("what is on my list?");
    Object.assign(dm.event, {
      subtype: "file_share",
      files: [{ id: "F9", name: "todo.txt", mimetype: "text/plain", size: 15, url_private: `${h.slackFilesUrl}/files-pri/T0-F9/todo.txt` }],
    });
    const body = JSON.stringify(dm);
    expect((await post("slack", body, await slackHeaders(body))).status).toBe(200);
    await h.slack.waitFor((c) => c.path.endsWith("/chat.postMessage") && String(c.body.text).startsWith("echo: what is on my list?"));
    expect(h.slackFiles.requests).toEqual([{ path: "/files-pri/T0-F9/todo.txt", authorization: `Bearer ${SLACK_TEST.token}` }]);
    expect(lastUserText(h.llm.calls.at(-1)!.body)).toContain("buy more coffee");
  });

  it("Discord: /ask with a file option fetches the CDN URL", async () => {
    h.cdn.serve("/attachments/1/2/pic.png?ex=1", PNG, "image/png");
    const ask = dc.command("ask", { prompt: "describe it" });
    ask.data.options.push({ name: "file", type: 11, value: "55" } as never);
    Object.assign(ask.data, {
      resolved: {
        attachments: {
          "55": { id: "55", filename: "pic.png", content_type: "image/png", size: PNG.byteLength, url: `${h.cdnUrl}/attachments/1/2/pic.png?ex=1` },
        },
      },
    });
    const body = JSON.stringify(ask);
    expect(await (await post("discord", body, await discordHeaders(body))).json()).toEqual({ type: 5 });
    await h.discord.waitFor((c) => c.method === "PATCH" && String(c.body.content).startsWith("echo: describe it"));
    expect(imagesOf(h.llm.calls.at(-1)!.body.messages.at(-1)!.content)).toHaveLength(1);
  });
});
