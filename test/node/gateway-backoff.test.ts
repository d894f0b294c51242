import { describe, expect, it } from "vitest";
import { Backoff } from "../../cli/gateway/backoff.ts";

const CEILINGS = [1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000];

describe("reconnect backoff", () => {
  it("doubles from 1 s to a 30 s cap, with equal jitter in [ceiling/2, ceiling)", () => {
    const low = new Backoff({ random: () => 0 });
    const high = new Backoff({ random: () => 0.999999 });
    expect(CEILINGS.map(() => low.next())).toEqual(CEILINGS.map((c) => c / 2));
    const highs = CEILINGS.map(() => high.next());
    highs.forEach((ms, i) => {
      expect(ms).toBeLessThanOrEqual(CEILINGS[i]!);
      expect(ms).toBeGreaterThan(CEILINGS[i]! * 0.99);
    });
  });

  it("resets only after a connection that stayed up for a minute", () => {
    const b = new Backoff({ random: () => 0 });
    for (let i = 0; i < 4; i++) b.next();
    b.up(0);
    b.down(59_999);
    expect(b.ceilingMs).toBe(16_000);
    b.up(100_000);
    b.down(160_000);
    expect(b.ceilingMs).toBe(1_000);
    expect(b.next()).toBe(500);
  });
});
