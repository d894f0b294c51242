import { DatabaseSync } from "node:sqlite";
import { describe } from "vitest";
import { nodeSql } from "../../cli/gateway/sqlite.ts";
import { runtimeContract } from "../support/runtime-contract.ts";

describe("turn runtime on node:sqlite (the relay gateway's storage)", () => {
  runtimeContract(() => nodeSql(new DatabaseSync(":memory:")));
});
