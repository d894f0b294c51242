/**
 * Hostile variants of a valid payload, for the boundary tests: one field at a time is given
 * a value of the wrong type (or removed), deterministically from a seed.
 */
import { rng } from "./random.ts";

const WRONG: unknown[] = [
  5,
  -1,
  1.5,
  1e308,
  "text",
  "",
  null,
  {},
  [],
  true,
  { nested: { deeper: [1, "x", null] } },
  "x".repeat(5000),
  "\u0000\uffff",
  [1, 2, 3],
  "9".repeat(40),
];

type Path = Array<string | number>;

function paths(value: unknown, prefix: Path = [], out: Path[] = []): Path[] {
  if (value === null || typeof value !== "object") return out;
  for (const [k, v] of Object.entries(value)) {
    const key = Array.isArray(value) ? Number(k) : k;
    out.push([...prefix, key]);
    paths(v, [...prefix, key], out);
  }
  return out;
}

function setAt(root: unknown, path: Path, value: unknown | typeof REMOVE): unknown {
  const copy = structuredClone(root);
  let at = copy as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) at = at[key] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (value === REMOVE) delete at[last];
  else at[last] = value;
  return copy;
}

const REMOVE = Symbol("remove");

/** `count` variants of `base`, each with one field made wrong or removed. */
export function mutations(base: unknown, count: number, seed: number): unknown[] {
  const rand = rng(seed);
  const all = paths(base);
  const out: unknown[] = [];
  for (let i = 0; i < count; i++) {
    const path = all[Math.floor(rand() * all.length)]!;
    const pick = Math.floor(rand() * (WRONG.length + 1));
    out.push(setAt(base, path, pick === WRONG.length ? REMOVE : WRONG[pick]));
  }
  return out;
}

/** Bodies that are not objects at all. */
export const NOT_OBJECTS = ["null", "[]", "5", '"text"', "{}", "true", '{"a":', "\u0000"];
