/// <reference types="vite/client" />
import { runSuites } from "../worker/suites.ts";

// Every suite of the relay project, in one runtime (test/worker/suites.ts says why).
runSuites(import.meta.glob("./*.suite.ts"));
