import { describe, expect, it } from "vitest";
import { renderMessage, type Dialect, type RenderedPart } from "../../workers/format/index.ts";
import { randomMarkdown, rng } from "../support/format-gen.ts";
import { fencesBalanced } from "../support/format-read.ts";

const OPTS = { limit: 4096, unit: "utf16" } as const;
const preview = (md: string, d: Dialect) => renderMessage(md, d, { ...OPTS, partial: true });
const tg = (md: string) => preview(md, "telegram")[0]!;
const covered = (p: RenderedPart) => (p.entities ?? []).map((e) => [e.type, p.text.slice(e.offset, e.offset + e.length), ...(e.language ? [e.language] : [])]);

/** Replies as they stream, one character at a time. */
const REPLIES = [
  `## Deploying the Worker

Run \`npm ci\` first, then **deploy** with *wrangler* and ~~old~~ flags. See [the docs](https://en.wikipedia.org/wiki/Cloudflare_(company)).

1. Install dependencies
2. Configure **\`LLM_BASE_URL\`** and *the \`key\`*
3. Deploy

> **Note:** secrets go in \`.dev.vars\`.`,
  `Use a guard:

\`\`\`ts
if (a < b && c > 0) {
  return "ok";
}
\`\`\`

| Model | Latency |
|:------|--------:|
| small | 120 ms |
| **large** | 1.4 s |

Done, see ![chart](https://i.io/c.png) and <https://x.io>.`,
];

const inWord = (c: string | undefined) => c !== undefined && /[\p{L}\p{N}]/u.test(c);

/**
 * The prefix lengths a stream can stop at that a preview can tell apart: all of them except a
 * stop inside a word between its second and its last letter ("**bo" and "**bol" of "**bold"
 * preview as "**b" does, a letter longer: what the preview decides turns on markers, spaces and
 * line breaks, never on how many letters follow one). Every marker, space and line break still
 * ends a prefix, and so do each word's first and last letter. Rendering every character's
 * prefix is quadratic and cost about three times the CPU for the same boundaries.
 */
function prefixEnds(md: string): number[] {
  const ends: number[] = [];
  for (let n = 1; n < md.length; n++) if (!(inWord(md[n - 2]) && inWord(md[n - 1]) && inWord(md[n]))) ends.push(n);
  return [...ends, md.length];
}

/** Telegram text outside code must show no Markdown marker at all (the replies hold none literally). */
function rawMarkers(p: RenderedPart): string[] {
  let outside = p.text;
  for (const e of p.entities ?? []) {
    if (e.type === "code" || e.type === "pre") outside = outside.slice(0, e.offset) + " ".repeat(e.length) + outside.slice(e.offset + e.length);
  }
  return [...outside.matchAll(/[*`~[\]|]/g)].map((m) => `${m[0]} at ${m.index}: ${JSON.stringify(outside.slice(Math.max(0, m.index - 20), m.index + 5))}`);
}

describe("streaming previews", () => {
  it("stops a stream at every prefix but those inside a word past its first letter", () => {
    expect(prefixEnds("**bold** x")).toEqual([1, 2, 3, 6, 7, 8, 9, 10]);
    expect(prefixEnds("a1 `b`")).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it.each(REPLIES.map((r, i) => [i, r] as const))(
    "reply %i: every prefix that ends on a boundary shows no raw markers, balanced fences, no half links",
    (_, reply) => {
      for (const n of prefixEnds(reply)) {
        const prefix = reply.slice(0, n);
        const where = JSON.stringify(prefix.slice(-30));
        expect(rawMarkers(tg(prefix)), where).toEqual([]);
        const discord = preview(prefix, "discord")[0]!.text;
        expect(fencesBalanced(discord), where).toBe(true);
        expect(discord, where).not.toMatch(/\\[*`~[\]|]/);
        const slack = preview(prefix, "slack")[0]!.text;
        expect(fencesBalanced(slack), where).toBe(true);
        expect(slack, where).not.toMatch(/\*\*|~~|\[|\]\(/);
      }
    },
  );

  it.each(REPLIES.map((r, i) => [i, r] as const))("reply %i: the complete reply previews exactly as its final rendering", (_, reply) => {
    for (const d of ["telegram", "slack", "discord", "plain"] as const) expect(preview(reply, d)).toEqual(renderMessage(reply, d, OPTS));
  });

  it("holds for every prefix of seeded random replies that ends on a boundary, and a complete one previews as its final rendering", () => {
    for (let seed = 1; seed <= 2; seed++) {
      const md = randomMarkdown(rng(seed));
      for (const n of prefixEnds(md).slice(0, -1))
        expect(rawMarkers(tg(md.slice(0, n))), `seed ${seed}: ${JSON.stringify(md.slice(0, n).slice(-30))}`).toEqual([]);
    }
    for (let seed = 1; seed <= 20; seed++) {
      const md = randomMarkdown(rng(seed));
      expect(preview(md, "telegram"), `seed ${seed}`).toEqual(renderMessage(md, "telegram", OPTS));
    }
  });

  it("closes what is open at the end", () => {
    expect(covered(tg("an unfinished **bol"))).toEqual([["bold", "bol"]]);
    expect(tg("an unfinished **bol").text).toBe("an unfinished bol");
    expect(covered(tg("a *b **c"))).toEqual([
      ["italic", "b c"],
      ["bold", "c"],
    ]);
    expect(covered(tg("run `npm c"))).toEqual([["code", "npm c"]]);
    expect(covered(tg("so ~~gon"))).toEqual([["strikethrough", "gon"]]);
    expect(covered(tg("```py\nprint(1)"))).toEqual([["pre", "print(1)", "py"]]);
  });

  it("shows an unfinished link or image as its label", () => {
    for (const md of ["see [text](htt", "see [text]", "see [text", "see [text][re", "see ![text](https://i.io/x"]) {
      expect(tg(md), md).toEqual({ text: "see text", entities: [] });
    }
    expect(tg("see [**te").entities).toEqual([{ type: "bold", offset: 4, length: 2 }]);
    expect(tg("see <https://exa").text).toBe("see");
  });

  it("hides markers typed at the very end until they mean something", () => {
    for (const md of ["Intro *", "Intro **", "Intro ~", "Intro `", "Intro ``", "Intro [", "Intro ![", "Intro <", "Intro \\"])
      expect(tg(md).text, md).toBe("Intro");
    expect(tg("```py\nprint(1)\n``")).toEqual({ text: "print(1)", entities: [{ type: "pre", offset: 0, length: 8, language: "py" }] });
    expect(tg("Intro\n-").text).toBe("Intro");
    expect(tg("Intro\n1.").text).toBe("Intro");
    expect(tg("| a | b |\n| --").text).toBe("");
  });

  it("leaves text that is not an opener alone", () => {
    for (const md of ["my_var and snake_case", "2 * 3 = 6 and 4 * 5", "a ~ b", "price: 5$ [1] done"])
      expect(tg(md).text, md).toBe(renderMessage(md, "telegram", OPTS)[0]!.text);
  });

  it("does not complete a paragraph a blank line has ended", () => {
    expect(tg("an **unclosed one\n\n").text).toBe("an **unclosed one");
  });
});
