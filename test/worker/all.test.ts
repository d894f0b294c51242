/// <reference types="vite/client" />
import { runSuites } from "./suites.ts";

// Every suite of the worker project, in one runtime (test/worker/suites.ts says why).
runSuites(import.meta.glob("./*.suite.ts"));
