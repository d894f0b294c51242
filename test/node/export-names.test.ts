import { describe, expect, it } from "vitest";
import { exportFileName } from "../../cli/data.ts";

describe("regression: sessions export --out wrote two sessions to one file (a/b and a_b both became a_b.jsonl)", () => {
  it("gives every session its own file name, whatever the ids", () => {
    const used = new Set<string>();
    const ids = ["a_b", "a/b", "a:b", "A_B", "..", "../../etc/passwd", "20261201_000000_3f9a2c0b7d1e4a65"];
    const names = ids.map((id) => exportFileName(id, "jsonl", used));
    expect(new Set(names.map((n) => n.toLowerCase())).size).toBe(ids.length);
    expect(names[0]).toBe("a_b.jsonl");
    expect(names.at(-1)).toBe("20261201_000000_3f9a2c0b7d1e4a65.jsonl");
    for (const n of names) expect(n).toMatch(/^[\w][\w.-]*\.jsonl$/);
  });
});
