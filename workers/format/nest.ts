import { itemAt } from "./item-at.ts";

/** A styled range over a line's text: [start, end), opened as the `order`-th range. */
export interface Range {
  key: string;
  start: number;
  end: number;
  order: number;
}

/** Keys open longest-running first; on ties in this order, so code is always innermost. */
const RANK: Record<string, number> = { b: 0, i: 1, s: 2, L: 3, c: 4 };

/**
 * Turns runs of text, each with a set of style keys, into properly nested ranges: any two are
 * disjoint or one contains the other (what Telegram requires of entities, and what keeps
 * Markdown markers balanced). A key that must close while an inner one stays open is split.
 */
export function nest(items: readonly { len: number; keys: readonly string[] }[]): Range[] {
  // runEnd[i].get(k): index after the last item of the run of key k that covers item i.
  const runEnd = items.map(() => new Map<string, number>());
  for (let i = items.length - 1; i >= 0; i--) {
    const ends = itemAt(runEnd, i);
    for (const k of itemAt(items, i).keys) ends.set(k, runEnd[i + 1]?.get(k) ?? i + 1);
  }
  const out: Range[] = [];
  const stack: { key: string; start: number; order: number }[] = [];
  let pos = 0;
  let order = 0;
  const closeFrom = (j: number) => {
    for (const f of stack.slice(j).reverse()) {
      if (pos > f.start) out.push({ key: f.key, start: f.start, end: pos, order: f.order });
    }
    stack.length = j;
  };
  items.forEach((item, i) => {
    const want = new Set(item.keys);
    const j = stack.findIndex((f) => !want.has(f.key));
    if (j >= 0) closeFrom(j);
    const open = new Set(stack.map((f) => f.key));
    const fresh = item.keys.filter((k) => !open.has(k));
    const rank = (k: string) => RANK[k.charAt(0)] ?? 5;
    const ends = itemAt(runEnd, i);
    // Every key of item i got its run's end in the first pass.
    const runEndOf = (k: string): number => {
      const end = ends.get(k);
      if (end === undefined) throw new RangeError(`key ${k} of item ${i} has no run end`);
      return end;
    };
    fresh.sort((a, b) => runEndOf(b) - runEndOf(a) || rank(a) - rank(b));
    for (const key of fresh) stack.push({ key, start: pos, order: order++ });
    pos += item.len;
  });
  closeFrom(0);
  return out.sort((a, b) => a.start - b.start || a.order - b.order);
}
