import type { Part } from "../parts.ts";

/**
 * One rendered part as Matrix content: the plain `body` (the Telegram dialect's text, which
 * carries no markup) and its entities written as the HTML subset of `org.matrix.custom.html`
 * (spec "m.room.message msgtypes: m.text"). Nested entities nest as tags; newlines outside
 * code blocks are `<br>`.
 */
export interface MatrixText {
  body: string;
  html: string | null;
}

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const escape = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);

/** C0 controls other than tab and newline say nothing in a chat, and JSON writes each as six bytes. */
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f]/g;

type Entity = NonNullable<Part["entities"]>[number];

function tags(e: Entity): { open: string; close: string } {
  switch (e.type) {
    case "bold":
      return { open: "<strong>", close: "</strong>" };
    case "italic":
      return { open: "<em>", close: "</em>" };
    case "underline":
      return { open: "<u>", close: "</u>" };
    case "strikethrough":
      return { open: "<del>", close: "</del>" };
    case "code":
      return { open: "<code>", close: "</code>" };
    case "pre":
      return { open: `<pre><code${e.language && /^[\w+#.-]{1,32}$/.test(e.language) ? ` class="language-${e.language}"` : ""}>`, close: "</code></pre>" };
    case "text_link":
      return e.url && /^https?:\/\//i.test(e.url) ? { open: `<a href="${escape(e.url)}">`, close: "</a>" } : { open: "", close: "" };
    case "blockquote":
      return { open: "<blockquote>", close: "</blockquote>" };
  }
}

/** The part's text and formatting as Matrix content; `html` null when the part has no formatting (plain body only). */
export function matrixText(part: Part): MatrixText {
  const body = part.text.replace(CONTROLS, "");
  const entities = (part.entities ?? []).filter((e) => e.length > 0);
  if (entities.length === 0 || body.length !== part.text.length) return { body, html: null };
  const opens = new Map<number, Entity[]>();
  const closes = new Map<number, Entity[]>();
  for (const e of entities) {
    opens.set(e.offset, [...(opens.get(e.offset) ?? []), e]);
    closes.set(e.offset + e.length, [e, ...(closes.get(e.offset + e.length) ?? [])]);
  }
  let html = "";
  let inPre = 0;
  for (let i = 0; i <= body.length; i++) {
    for (const e of closes.get(i) ?? []) {
      html += tags(e).close;
      if (e.type === "pre") inPre--;
    }
    if (i === body.length) break;
    for (const e of opens.get(i) ?? []) {
      html += tags(e).open;
      if (e.type === "pre") inPre++;
    }
    const ch = body.charAt(i);
    html += ch === "\n" && inPre === 0 ? "<br>" : escape(ch);
  }
  return { body, html };
}
