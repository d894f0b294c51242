import MarkdownIt from "markdown-it";
import type { Token } from "markdown-it";

/**
 * Markdown for the console, where every transcript is hostile: raw HTML is never passed
 * through (`html: false` escapes it as text), links keep only http(s) and mailto targets
 * (no `javascript:`, `data:`, `vbscript:` or relative tricks), open in a new tab without
 * referrer or opener, and images become links (a remote image would be a tracking pixel,
 * and the CSP would refuse it anyway). The output is the only HTML the console inserts.
 */
const md = new MarkdownIt("default", { html: false, linkify: true, typographer: false, breaks: true, maxNesting: 50 });
md.linkify.set({ fuzzyLink: false, fuzzyEmail: false, fuzzyIP: false });

const SAFE_SCHEMES = /^(https?:|mailto:)/i;

/** Whether a link target may be followed. markdown-it has already decoded and normalised it. */
export function safeLink(url: string): boolean {
  // Control characters and whitespace inside a scheme are how `java\tscript:` sneaks past.
  return SAFE_SCHEMES.test(url.trim()) && !/[\u0000-\u001f\u007f]/.test(url);
}

md.validateLink = safeLink;

/** The token markdown-it asks a rule to render (always one of `tokens`). */
function tokenAt(tokens: Token[], idx: number): Token {
  const token = tokens[idx];
  if (!token) throw new RangeError(`markdown-it asked to render token ${idx} of ${tokens.length}`);
  return token;
}

md.renderer.rules.link_open = (tokens, idx, options, _env, self) => {
  const token = tokenAt(tokens, idx);
  token.attrSet("target", "_blank");
  token.attrSet("rel", "noopener noreferrer nofollow");
  return self.renderToken(tokens, idx, options);
};

// Aligned table cells come with a style attribute, which the CSP (no inline styles) would
// refuse, loudly: they get a class instead.
md.core.ruler.push("align_classes", (state) => {
  for (const token of state.tokens) {
    const style = token.attrGet("style");
    if (style === null) continue;
    const align = /text-align:(left|right|center)/.exec(String(style))?.[1];
    token.attrs = (token.attrs ?? []).filter(([name]) => name !== "style");
    if (align) token.attrJoin("class", `align-${align}`);
  }
});

md.renderer.rules.image = (tokens, idx) => {
  const token = tokenAt(tokens, idx);
  const src = String(token.attrGet("src") ?? "");
  const alt = md.utils.escapeHtml(token.content || "image");
  if (!safeLink(src)) return `<span class="image-ref">[image: ${alt}]</span>`;
  return `<a class="image-ref" href="${md.utils.escapeHtml(src)}" target="_blank" rel="noopener noreferrer nofollow">[image: ${alt}]</a>`;
};

/** Longest text rendered as Markdown; longer messages are shown as plain text (bounded work per message). */
export const MAX_MARKDOWN_CHARS = 200_000;

/** Safe HTML for a message's Markdown. */
export function renderMarkdown(text: string): string {
  if (text.length > MAX_MARKDOWN_CHARS) return `<pre>${md.utils.escapeHtml(text)}</pre>`;
  return md.render(text.toWellFormed());
}
