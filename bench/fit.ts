/** Fitting the round trips a path waits for (bench/latency-sim.ts). */

/**
 * Least squares of y = base + a·x1 + b·x2 (each point's delays x1, x2): the slopes are the
 * round trips a path waits for, per kind. Needs three points not on one line.
 */
export function fitTwo(points: ReadonlyArray<{ x1: number; x2: number; y: number }>): { base: number; a: number; b: number } {
  // Normal equations, solved by Cramer's rule (3×3).
  const s = (f: (p: { x1: number; x2: number; y: number }) => number) => points.reduce((acc, p) => acc + f(p), 0);
  const m = [
    [points.length, s((p) => p.x1), s((p) => p.x2)],
    [s((p) => p.x1), s((p) => p.x1 * p.x1), s((p) => p.x1 * p.x2)],
    [s((p) => p.x2), s((p) => p.x1 * p.x2), s((p) => p.x2 * p.x2)],
  ];
  const v = [s((p) => p.y), s((p) => p.x1 * p.y), s((p) => p.x2 * p.y)];
  const det = (a: number[][]) =>
    a[0]![0]! * (a[1]![1]! * a[2]![2]! - a[1]![2]! * a[2]![1]!) -
    a[0]![1]! * (a[1]![0]! * a[2]![2]! - a[1]![2]! * a[2]![0]!) +
    a[0]![2]! * (a[1]![0]! * a[2]![1]! - a[1]![1]! * a[2]![0]!);
  const d = det(m);
  if (Math.abs(d) < 1e-9) throw new Error("fitting round trips needs at least three delay settings that are not on one line");
  const col = (i: number) => det(m.map((row, r) => row.map((x, c) => (c === i ? v[r]! : x))));
  return { base: col(0) / d, a: col(1) / d, b: col(2) / d };
}
