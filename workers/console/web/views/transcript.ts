import { h, time } from "../dom.ts";
import { renderMarkdown } from "../markdown.ts";
import type { Attachment, Message, Transcript } from "../types.ts";

const ROLE_LABEL: Record<string, string> = { user: "User", assistant: "Agent", system: "System", tool: "Tool" };

/** A block of rendered Markdown (markdown.ts makes it safe: no raw HTML, vetted links). */
export function markdownBlock(text: string): HTMLElement {
  const el = h("div", { class: "md" });
  el.innerHTML = renderMarkdown(text);
  return el;
}

function attachmentsOf(list: Attachment[] | null | undefined): HTMLElement | null {
  if (!list || list.length === 0) return null;
  return h(
    "ul",
    { class: "attachments", "aria-label": "Attachments" },
    ...list.map((a) => {
      const label = `${a.name ?? "file"}${a.mime ? ` (${a.mime})` : ""}`;
      // Only files on this origin: an attachment's link is the Worker's, never a sender's.
      return h("li", {}, a.url && a.url.startsWith("/") && !a.url.startsWith("//") ? h("a", { href: a.url, download: a.name ?? true }, label) : label);
    }),
  );
}

function toolCalls(m: Message): HTMLElement[] {
  return (m.tool_calls ?? []).map((c) =>
    h("details", { class: "tool" }, h("summary", {}, `Tool call: ${c.function.name}`), h("pre", {}, prettyJson(c.function.arguments))),
  );
}

function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** One transcript message: Markdown for people's and the agent's words, tool traffic folded. */
export function messageView(m: Message): HTMLElement {
  const head = h(
    "header",
    {},
    h("span", { class: "role" }, ROLE_LABEL[m.role] ?? m.role),
    m.role === "tool" && m.tool_name ? h("span", { class: "muted" }, m.tool_name) : null,
    m.finish_reason === "interrupted" ? h("span", { class: "badge bad" }, "interrupted") : null,
    m.finish_reason === "error" ? h("span", { class: "badge bad" }, "failed") : null,
    m.undelivered ? h("span", { class: "badge bad", title: m.undelivered }, "undelivered") : null,
    h("time", { datetime: new Date(m.created_at).toISOString() }, time(m.created_at)),
  );
  const body: Array<HTMLElement | null> = [];
  if (m.role === "tool") {
    body.push(h("details", { class: "tool" }, h("summary", {}, `Tool result${m.tool_name ? `: ${m.tool_name}` : ""}`), h("pre", {}, m.content ?? "")));
  } else if (m.role === "system") {
    body.push(h("details", { class: "tool" }, h("summary", {}, "System message"), markdownBlock(m.content ?? "")));
  } else if (m.content) {
    body.push(markdownBlock(m.content));
  }
  body.push(...toolCalls(m), attachmentsOf(m.attachments));
  return h("article", { class: `msg ${m.role}`, "data-message": m.id }, head, ...body);
}

/**
 * The whole transcript, oldest first. Messages folded into the rolling summary (no longer
 * sent to the model) are collapsed under one line, followed by the summary itself.
 */
export function transcriptView(t: Transcript): HTMLElement[] {
  const out: HTMLElement[] = [];
  const summary = t.summary;
  const folded = summary ? t.messages.filter((m) => m.id <= summary.folded_through) : [];
  if (t.summary) {
    const text = t.summary.text;
    const what = text === null ? "no longer sent to the model (no summary could be written)" : "folded into the summary";
    if (folded.length > 0)
      out.push(h("details", { class: "folded" }, h("summary", {}, `${folded.length} earlier message(s), ${what}`), ...folded.map(messageView)));
    if (text !== null)
      out.push(
        h(
          "article",
          { class: "msg summary", "aria-label": "Summary" },
          h("header", {}, h("span", { class: "role" }, "Summary"), h("span", { class: "badge muted" }, "what the agent remembers of the earlier turns")),
          markdownBlock(text),
        ),
      );
  }
  out.push(...t.messages.filter((m) => !folded.includes(m)).map(messageView));
  return out;
}
