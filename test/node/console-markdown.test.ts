import { describe, expect, it } from "vitest";
import { renderMarkdown, safeLink } from "../../workers/console/web/markdown.ts";

/** Hostile transcript text, each a known way to get markup or script through a Markdown renderer. */
const HOSTILE = [
  "<script>alert(1)</script>",
  "<img src=x onerror=alert(1)>",
  "[click](javascript:alert(1))",
  "[click](JaVaScRiPt:alert(1))",
  "[click](java\tscript:alert(1))",
  "[click](&#106;avascript:alert(1))",
  "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
  "[click](vbscript:msgbox(1))",
  "<javascript:alert(1)>",
  "![x](javascript:alert(1))",
  '![x](https://tracker.test/p.gif "t")',
  '<a href="javascript:alert(1)">x</a>',
  '[x](https://ok.test/" onmouseover="alert(1))',
  "<iframe src=https://evil.test></iframe>",
  "<style>body{display:none}</style>",
  "`<b>` and ```\n<script>x</script>\n```",
  "| a | b |\n|:-|-:|\n| <b>1</b> | 2 |",
];

const ELEMENTS = [
  "p",
  "br",
  "strong",
  "em",
  "s",
  "code",
  "pre",
  "a",
  "span",
  "ul",
  "ol",
  "li",
  "blockquote",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "hr",
  "table",
  "thead",
  "tbody",
  "tr",
  "th",
  "td",
];
const ATTRIBUTES = ["href", "target", "rel", "class", "start"];

describe("the console's Markdown", () => {
  it("renders ordinary Markdown", () => {
    const html = renderMarkdown("**bold** and `code`\n\n- a\n- b\n\n[site](https://example.test/a?b=1)");
    expect(html).toContain("<strong>bold</strong>");
    expect(html).toContain("<code>code</code>");
    expect(html).toContain("<li>a</li>");
    expect(html).toContain('<a href="https://example.test/a?b=1" target="_blank" rel="noopener noreferrer nofollow">site</a>');
  });

  it.each(HOSTILE)("leaves %j inert: no element, attribute or URL that could run or load anything", (text) => {
    // Escaped text cannot open a tag, so every real tag is a `<…>` run: each must be an
    // allowed element with allowed attributes, and every link target http(s) or mailto.
    for (const [, name, attrs] of renderMarkdown(text).matchAll(/<\/?([a-z0-9]+)([^>]*)>/gi)) {
      expect(ELEMENTS, name).toContain(name!.toLowerCase());
      for (const [, attr, value] of attrs!.matchAll(/\s([^\s=]+)="([^"]*)"/g)) {
        expect(ATTRIBUTES, `${name} ${attr}`).toContain(attr);
        if (attr === "href") expect(value).toMatch(/^(https?:|mailto:)/);
      }
      expect(attrs!.replace(/\s[^\s=]+="[^"]*"/g, "").trim(), `${name}: unquoted attributes`).toBe("");
    }
  });

  it("aligns table cells with classes, not the style attributes the CSP refuses", () => {
    const html = renderMarkdown("| a | b |\n|:-|-:|\n| 1 | 2 |");
    expect(html).toContain('<th class="align-left">a</th>');
    expect(html).toContain('<td class="align-right">2</td>');
    expect(html).not.toContain("style=");
  });

  it("turns images into links, so no remote image is fetched", () => {
    expect(renderMarkdown("![chart](https://example.test/c.png)")).toContain(
      '<a class="image-ref" href="https://example.test/c.png" target="_blank" rel="noopener noreferrer nofollow">[image: chart]</a>',
    );
  });

  it("keeps only http(s) and mailto links", () => {
    expect(["https://a.test", "http://a.test", "mailto:a@b.test"].map(safeLink)).toEqual([true, true, true]);
    expect(["javascript:x", "data:x", "/relative", "#frag", "file:///etc", "https://a.test/\u0000"].map(safeLink)).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});
