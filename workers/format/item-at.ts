/**
 * `xs[i]` for an index the caller's loop bounds already keep inside the array (the compiler,
 * with `noUncheckedIndexedAccess`, cannot see that); throws a RangeError naming the index
 * instead of passing `undefined` on if that reasoning is ever wrong.
 */
export function itemAt<T>(xs: readonly T[], i: number): T {
  const x = xs[i];
  if (x === undefined) throw new RangeError(`index ${i} is outside 0..${xs.length - 1}`);
  return x;
}
