import { describe, expect, it } from "vitest";
import { z } from "zod";
import { firstIssue, parseJson } from "../../workers/json.ts";

const Schema = z.object({ name: z.string(), tags: z.array(z.string()).optional() });

describe("the one JSON-and-first-zod-issue parser", () => {
  it("returns the value when the text is JSON the schema accepts", () => {
    expect(parseJson('{"name":"a","tags":["x"]}', Schema)).toEqual({ ok: true, value: { name: "a", tags: ["x"] } });
  });

  it("says when the text is not JSON at all", () => {
    for (const text of ["{not json", "", "undefined"]) expect(parseJson(text, Schema)).toEqual({ ok: false, notJson: true });
  });

  it("reports only the first issue, with its dotted path, code and message", () => {
    const checked = parseJson('{"name":1,"tags":["x",2]}', Schema);
    expect(checked).toMatchObject({ ok: false, notJson: false, issue: { path: "name", code: "invalid_type" } });
    expect(parseJson('{"name":"a","tags":["x",2]}', Schema)).toMatchObject({ issue: { path: "tags.1", code: "invalid_type" } });
  });

  it("gives an empty path for the value itself", () => {
    expect(parseJson("[1]", Schema)).toMatchObject({ ok: false, notJson: false, issue: { path: "" } });
    const error = Schema.safeParse(null).error!;
    expect(firstIssue(error)).toEqual({ path: "", code: "invalid_type", message: error.issues[0]!.message });
  });
});
