import type { PlatformInfo } from "../info.ts";
import { matrixLink } from "./link.ts";

export const matrixInfo = {
  name: "matrix",
  label: "Matrix",
  threadWord: "thread",
  required: ["MATRIX_HOMESERVER_URL", "MATRIX_AS_TOKEN", "MATRIX_HS_TOKEN", "MATRIX_BOT_USER"],
  setupHelp:
    "prints the application service registration YAML (making MATRIX_AS_TOKEN and\nMATRIX_HS_TOKEN when unset), then checks the homeserver answers and pings the Worker",
  link: matrixLink,
} as const satisfies PlatformInfo<"matrix">;
