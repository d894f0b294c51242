import { encodeChat } from "gpt-tokenizer/encoding/cl100k_base";
import type { ChatMessage, ToolSchema } from "../../workers/agent/index.ts";

/** Small deterministic PRNG so a failing seed can be replayed. */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

// Pieces of the kinds of text a transcript holds: prose, code, JSON, numbers, other
// scripts, emoji, whitespace runs, and text that looks like special tokens.
const PIECES = [
  "the",
  "quick",
  "brown",
  "fox",
  "deploy",
  "Worker",
  "session",
  "handoff",
  "Telegram",
  "budget",
  "function handler(req) {",
  "return new Response(body);",
  "}",
  "const x = await fetch(url);",
  '{"id": 42, "ok": true}',
  "[1, 2, 3]",
  "3.14159",
  "2026-12-01T07:35:48Z",
  "0xdeadbeef",
  "1234567890",
  "naïve café",
  "Grüße",
  "東京都の天気",
  "こんにちは世界",
  "Привет",
  "مرحبا",
  "🙂",
  "🚀🚀",
  "\n",
  "\n\n",
  "    ",
  "\t",
  "<|endoftext|>",
  "<|im_start|>",
  "https://example.com/a/b?c=d",
  "user@example.com",
  ".",
  ",",
  "!",
  "?",
];

/** Random text of about `words` pieces. */
export function randomText(rand: () => number, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(PIECES[Math.floor(rand() * PIECES.length)]!);
  // Long texts keep their spaces: a run of thousands of characters without one makes the
  // exact reference count (one piece, quadratic) slow; short runs cover that case.
  return out.join(rand() < 0.8 || words > 60 ? " " : "");
}

/**
 * One generated turn: a user message, then maybe tool rounds (calls with big results),
 * then an assistant reply. `id` keeps call ids unique across a transcript.
 */
export function generateTurn(rand: () => number, id: number, opts: { bigResultChars?: number } = {}): ChatMessage[] {
  const big = opts.bigResultChars ?? 6000;
  const turn: ChatMessage[] = [{ role: "user", content: `Question ${id}. ${randomText(rand, 5 + Math.floor(rand() * 40))}` }];
  const rounds = rand() < 0.5 ? Math.floor(rand() * 3) : 0;
  for (let r = 0; r < rounds; r++) {
    const calls = Array.from({ length: 1 + Math.floor(rand() * 2) }, (_, k) => ({
      id: `call_${id}_${r}_${k}`,
      type: "function" as const,
      function: { name: "fetch_url", arguments: JSON.stringify({ url: `https://docs.example/${id}/${r}/${k}` }) },
    }));
    turn.push({ role: "assistant", content: rand() < 0.3 ? "Let me look that up." : null, tool_calls: calls, finish_reason: "tool_calls" });
    for (const c of calls) {
      turn.push({
        role: "tool",
        tool_call_id: c.id,
        name: "fetch_url",
        content: JSON.stringify({ url: `https://docs.example/${id}`, text: randomText(rand, Math.floor(big / 6)) }),
      });
    }
  }
  turn.push({ role: "assistant", content: `Answer ${id}. ${randomText(rand, 10 + Math.floor(rand() * 80))}`, finish_reason: "stop" });
  return turn;
}

/** Random messages of every role and shape, for token estimates. */
export function randomMessages(rand: () => number): ChatMessage[] {
  const n = 1 + Math.floor(rand() * 8);
  const out: ChatMessage[] = [];
  for (let i = 0; i < n; i++) {
    const kind = Math.floor(rand() * 4);
    if (kind === 0) out.push({ role: "user", content: randomText(rand, Math.floor(rand() * 200)) });
    if (kind === 1) out.push({ role: "system", content: randomText(rand, Math.floor(rand() * 100)) });
    if (kind === 2) {
      const id = `call_${i}_${Math.floor(rand() * 1e6)}`;
      out.push({
        role: "assistant",
        content: rand() < 0.5 ? null : randomText(rand, 10),
        tool_calls: [{ id, type: "function", function: { name: "fetch_url", arguments: JSON.stringify({ url: randomText(rand, 3) }) } }],
      });
      out.push({ role: "tool", tool_call_id: id, name: "fetch_url", content: randomText(rand, Math.floor(rand() * 400)) });
    }
    if (kind === 3) out.push({ role: "assistant", content: randomText(rand, Math.floor(rand() * 150)) });
  }
  return out;
}

/**
 * The tokenizer's own exact count of a request's content: the chat rendered in the
 * encoding's chat format (`encodeChat`), each message's tool calls, ids and names written
 * into it, and the tool schemas as one more message. `encodeChat` encodes each message on
 * its own, so the count of a chat is the sum of its messages' counts plus the reply
 * priming: counts are memoised per message, which keeps long simulations fast.
 */
export function exactTokens(messages: readonly ChatMessage[], tools?: readonly ToolSchema[]): number {
  let n = encodeChat([], "gpt-4").length; // the reply priming alone
  for (const m of messages) n += exactMessage(m);
  if (tools?.length) n += chatTokens([{ role: "system", content: tools.map((t) => JSON.stringify(t.function)).join("\n") }]);
  return n;
}

const exactMemo = new WeakMap<ChatMessage, number>();
/**
 * Counts by what is counted too: a planner builds the system and summary messages afresh
 * for every request (new objects, the same few texts), and a simulation makes hundreds of
 * requests. Bounded, as the Node test files share this module.
 */
const exactByText = new Map<string, number>();

function exactMessage(m: ChatMessage): number {
  const known = exactMemo.get(m);
  if (known !== undefined) return known;
  const content = [m.content ?? "", m.name ?? "", m.tool_call_id ?? "", ...(m.tool_calls ?? []).flatMap((c) => [c.id, c.function.name, c.function.arguments])]
    .filter(Boolean)
    .join("\n");
  const key = `${m.role}\n${content}`;
  let n = exactByText.get(key);
  if (n === undefined) {
    n = chatTokens([{ role: m.role, content }]);
    if (exactByText.size >= 2000) exactByText.clear();
    exactByText.set(key, n);
  }
  exactMemo.set(m, n);
  return n;
}

function chatTokens(chat: { role: string; content: string }[]): number {
  return encodeChat(chat, "gpt-4", { disallowedSpecial: new Set() }).length - encodeChat([], "gpt-4").length;
}
