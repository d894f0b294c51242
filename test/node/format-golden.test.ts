import { describe, expect, it } from "vitest";
import { renderMessage, renderPlain, renderTerminal, type Dialect, type RenderedPart } from "../../workers/format/index.ts";
import { entityProblems } from "../support/format-read.ts";

const TELEGRAM = { limit: 4096, unit: "utf16" } as const;
const one = (md: string, d: Dialect): RenderedPart => {
  const parts = renderMessage(md, d, TELEGRAM);
  expect(parts).toHaveLength(1);
  return parts[0]!;
};
/** Each entity with the text it covers, so expectations read like the message. */
const covered = (p: RenderedPart) =>
  (p.entities ?? []).map((e) => [e.type, p.text.slice(e.offset, e.offset + e.length), ...(e.url ? [e.url] : []), ...(e.language ? [e.language] : [])]);

/** Realistic replies, in the shapes models write them. */
const SETUP = `## Deploying the Worker

Run \`npm ci\` first, then **deploy** with *wrangler*. See [the docs](https://en.wikipedia.org/wiki/Cloudflare_(company)).

1. Install dependencies
2. Configure:
   - \`LLM_BASE_URL\`
   - ~~\`LLM_KEY\`~~ **\`LLM_API_KEY\`**
3. Deploy

> **Note:** secrets go in \`.dev.vars\`, never in git.`;

const TABLE = `Here are the results:

| Model | Latency | Cost |
|:------|--------:|:----:|
| small | 120 ms | $ |
| **large** | 1.4 s | $$$ |
| 日本語 | 3 s | ? |`;

const CODE = `Use a guard:

\`\`\`ts
if (a < b && c > 0) {
  return "ok";
}
\`\`\`

That's it & done.`;

const EMOJI = "🎉 **Done!** The 𝐁𝐨𝐥𝐝 result is ready 👨‍👩‍👧‍👦 — see [report 📊](https://example.com/r?a=1&b=2).";
const MENTIONS = "@everyone the build is green. Ping <@123> or @here if not.";

describe("Telegram: text plus entities", () => {
  it("renders headings, lists, links and quotes as entities over plain text", () => {
    const p = one(SETUP, "telegram");
    expect(p.text).toBe(
      "Deploying the Worker\n\nRun npm ci first, then deploy with wrangler. See the docs.\n\n1. Install dependencies\n2. Configure:\n   • LLM_BASE_URL\n   • LLM_KEY LLM_API_KEY\n3. Deploy\n\nNote: secrets go in .dev.vars, never in git.",
    );
    expect(covered(p)).toEqual([
      ["bold", "Deploying the Worker"],
      ["code", "npm ci"],
      ["bold", "deploy"],
      ["italic", "wrangler"],
      ["text_link", "the docs", "https://en.wikipedia.org/wiki/Cloudflare_(company)"],
      ["code", "LLM_BASE_URL"],
      ["strikethrough", "LLM_KEY"],
      ["code", "LLM_KEY"],
      ["bold", "LLM_API_KEY"],
      ["code", "LLM_API_KEY"],
      ["blockquote", "Note: secrets go in .dev.vars, never in git."],
      ["bold", "Note:"],
      ["code", ".dev.vars"],
    ]);
    expect(entityProblems(p)).toEqual([]);
  });

  it("counts offsets in UTF-16 units across emoji and non-BMP letters", () => {
    const p = one(EMOJI, "telegram");
    expect(p.text).toBe("🎉 Done! The 𝐁𝐨𝐥𝐝 result is ready 👨‍👩‍👧‍👦 — see report 📊.");
    expect(p.entities).toEqual([
      { type: "bold", offset: 3, length: 5 },
      { type: "text_link", offset: 56, length: 9, url: "https://example.com/r?a=1&b=2" },
    ]);
  });

  it("lays tables out as an aligned pre block and code with its language", () => {
    const table = one(TABLE, "telegram");
    expect(table.text).toBe(
      "Here are the results:\n\nModel  | Latency | Cost\n-------+---------+-----\nsmall  |  120 ms |  $\nlarge  |   1.4 s | $$$\n日本語 |     3 s |  ?",
    );
    expect(table.entities).toEqual([{ type: "pre", offset: 23, length: 111 }]);
    const code = one(CODE, "telegram");
    expect(code.text).toBe('Use a guard:\n\nif (a < b && c > 0) {\n  return "ok";\n}\n\nThat\'s it & done.');
    expect(covered(code)).toEqual([["pre", 'if (a < b && c > 0) {\n  return "ok";\n}', "ts"]]);
  });

  it("keeps bare URLs, relative links and images as text", () => {
    const p = one("Bare https://x.io/a_b, <https://y.io>, [rel](/docs), [bad](javascript:alert(1)) and ![chart](https://i.io/c.png)", "telegram");
    expect(p.text).toBe("Bare https://x.io/a_b, https://y.io, rel (/docs), [bad](javascript:alert(1)) and chart (https://i.io/c.png)");
    expect(p.entities).toEqual([]);
  });
});

describe("Slack: mrkdwn", () => {
  it("writes bold, italic, strike, code, links and quotes, headings bold, code without language", () => {
    expect(one(SETUP, "slack").text).toBe(
      "*Deploying the Worker*\n\nRun `npm ci` first, then *deploy* with _wrangler_. See <https://en.wikipedia.org/wiki/Cloudflare_(company)|the docs>.\n\n1. Install dependencies\n2. Configure:\n   • `LLM_BASE_URL`\n   • ~`LLM_KEY`~ *`LLM_API_KEY`*\n3. Deploy\n\n> *Note:* secrets go in `.dev.vars`, never in git.",
    );
    expect(one(CODE, "slack").text).toBe('Use a guard:\n\n```\nif (a &lt; b &amp;&amp; c &gt; 0) {\n  return "ok";\n}\n```\n\nThat\'s it &amp; done.');
    expect(one(TABLE, "slack").text).toBe(
      "Here are the results:\n\n```\nModel  | Latency | Cost\n-------+---------+-----\nsmall  |  120 ms |  $\nlarge  |   1.4 s | $$$\n日本語 |     3 s |  ?\n```",
    );
  });

  it("escapes &, < and > everywhere, link targets included, so nothing becomes a Slack mention", () => {
    expect(one(EMOJI, "slack").text).toBe("🎉 *Done!* The 𝐁𝐨𝐥𝐝 result is ready 👨‍👩‍👧‍👦 — see <https://example.com/r?a=1&amp;b=2|report 📊>.");
    expect(one(MENTIONS, "slack").text).toBe("@everyone the build is green. Ping &lt;@123&gt; or @here if not.");
  });

  it("drops markers Slack would show literally (inside a word)", () => {
    expect(one("un**believ**able and **whole**", "slack").text).toBe("unbelievable and *whole*");
  });
});

describe("Discord: its own Markdown", () => {
  it("keeps headings, fences with language, masked links, and escapes what would format", () => {
    expect(one(SETUP, "discord").text).toBe(
      "## Deploying the Worker\n\nRun `npm ci` first, then **deploy** with *wrangler*. See [the docs](https://en.wikipedia.org/wiki/Cloudflare_%28company%29).\n\n1\\. Install dependencies\n2\\. Configure:\n   • `LLM_BASE_URL`\n   • ~~`LLM_KEY`~~ **`LLM_API_KEY`**\n3\\. Deploy\n\n> **Note:** secrets go in `.dev.vars`, never in git.",
    );
    expect(one(CODE, "discord").text).toBe('Use a guard:\n\n```ts\nif (a < b && c > 0) {\n  return "ok";\n}\n```\n\nThat\'s it & done.');
    expect(one("#### Deep heading\n\nliteral \\*stars\\* and a\\_b", "discord").text).toBe("**Deep heading**\n\nliteral \\*stars\\* and a\\_b");
  });

  it("defuses @everyone and @here but leaves other mentions as text", () => {
    expect(one(MENTIONS, "discord").text).toBe("@\u200beveryone the build is green. Ping <@123> or @\u200bhere if not.");
  });

  it("writes out a link whose label is another URL (Discord would refuse to mask it)", () => {
    expect(one("[https://safe.example](https://other.example) and [index.ts](https://git.io/x)", "discord").text).toBe(
      "https://safe.example (https://other.example) and [index.ts](https://git.io/x)",
    );
  });

  it("keeps adjacent markers apart so they cannot fuse", () => {
    expect(one("**a***b*", "discord").text).toBe("**a**\u200b*b*");
  });
});

describe("plain and terminal", () => {
  it("renderPlain shows what a reader sees: no markers, links as label (url)", () => {
    expect(renderPlain(SETUP)).toBe(
      "Deploying the Worker\n\nRun npm ci first, then deploy with wrangler. See the docs (https://en.wikipedia.org/wiki/Cloudflare_(company)).\n\n1. Install dependencies\n2. Configure:\n   • LLM_BASE_URL\n   • LLM_KEY LLM_API_KEY\n3. Deploy\n\nNote: secrets go in .dev.vars, never in git.",
    );
    expect(renderMessage(SETUP, "plain", TELEGRAM)).toEqual([{ text: renderPlain(SETUP) }]);
  });

  it("renders for the terminal with ANSI when color is on and readable text when off", () => {
    const md = "# Title\n\n**b** *i* `c` [l](https://x.io)\n\n> q\n\n```js\nlet x;\n```";
    expect(renderTerminal(md, { color: false })).toBe("Title\n\nb i c l (https://x.io)\n\n> q\n\n    let x;");
    expect(renderTerminal(md, { color: true })).toBe(
      "\x1b[0m\x1b[1mTitle\x1b[0m\n\n\x1b[0m\x1b[1mb\x1b[0m \x1b[0m\x1b[3mi\x1b[0m \x1b[0m\x1b[36mc\x1b[0m l\x1b[0m\x1b[2m \x1b[0m\x1b[2m(https://x.io)\x1b[0m\n\n\x1b[2m│\x1b[0m q\n\n\x1b[2m┌ js\x1b[0m\n\x1b[2m│ let x;\x1b[0m\n\x1b[2m└\x1b[0m",
    );
    expect(renderTerminal("one two three four five", { color: false, width: 10 })).toBe("one two\nthree four\nfive");
    expect(renderTerminal("- one two three four", { color: false, width: 10 })).toBe("• one two\n  three\n  four");
  });

  it("strips control characters so a reply cannot drive the terminal", () => {
    expect(renderTerminal("hi \x1b]0;pwned\x07 \x1b[31mred", { color: false })).toBe("hi ]0;pwned [31mred");
  });
});

describe("empty input", () => {
  it("gives one empty part in every dialect", () => {
    for (const md of ["", "   \n\n  \t"]) {
      expect(renderMessage(md, "telegram", TELEGRAM)).toEqual([{ text: "", entities: [] }]);
      for (const d of ["slack", "discord", "plain"] as const) expect(renderMessage(md, d, TELEGRAM)).toEqual([{ text: "" }]);
      expect(renderPlain(md)).toBe("");
    }
  });
});
