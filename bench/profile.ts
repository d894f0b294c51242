/**
 * CPU profiles of a `wrangler dev` Worker through its inspector port (Chrome DevTools
 * protocol), attributed to where the code runs: the Worker (the webhook's own handling)
 * or one of the Durable Objects. Under wrangler dev the Worker and its objects share one
 * isolate, so a sample is attributed by its stack: the frame nearest the top that lies in
 * code only one of them runs (intake and routes: the Worker; durable-objects/inbox: the
 * Inbox; durable-objects/session-agent, the turn runtime and the agent: the SessionAgent;
 * durable-objects/relay: the Relay). Shared code (adapters, zod, drizzle, settings) counts
 * for whoever called it; a sample with no such frame (a library's async continuation,
 * workerd's own work, GC) is listed on its own. Files are told apart by the module comments
 * esbuild leaves in the (unminified) bundle.
 */
import { within } from "./lib.ts";

interface CallFrame {
  functionName: string;
  scriptId: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
  /** Samples per source line (1-based lines of the bundle). */
  positionTicks?: Array<{ line: number; ticks: number }>;
}

/** A V8 CPU profile (Profiler.stop). */
export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** A minimal DevTools protocol client. */
class Inspector {
  readonly #ws: WebSocket;
  #id = 0;
  readonly #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  readonly scripts = new Map<string, string>();

  private constructor(ws: WebSocket) {
    this.#ws = ws;
    ws.addEventListener("message", (e) => {
      const msg = JSON.parse(String(e.data)) as {
        id?: number;
        result?: unknown;
        error?: { message: string };
        method?: string;
        params?: { scriptId: string; url: string };
      };
      if (msg.method === "Debugger.scriptParsed" && msg.params) this.scripts.set(msg.params.scriptId, msg.params.url);
      if (msg.id === undefined) return;
      const p = this.#pending.get(msg.id);
      this.#pending.delete(msg.id);
      if (msg.error) p?.reject(new Error(msg.error.message));
      else p?.resolve(msg.result);
    });
  }

  static async connect(port: number): Promise<Inspector> {
    // wrangler's inspector proxy says where to connect (it may listen on localhost only).
    const targets = (await (await fetch(`http://localhost:${port}/json`, { signal: AbortSignal.timeout(10_000) })).json()) as Array<{
      webSocketDebuggerUrl: string;
    }>;
    const url = targets[0]?.webSocketDebuggerUrl;
    if (!url) throw new Error(`the inspector on port ${port} lists no Worker`);
    // The proxy refuses a client without an Origin it knows (it guards against web pages).
    const ws = new WebSocket(url, { headers: { origin: "http://localhost" } } as unknown as string[]);
    await within(
      new Promise<void>((resolve, reject) => {
        ws.addEventListener("open", () => resolve(), { once: true });
        ws.addEventListener("error", () => reject(new Error(`no inspector on port ${port}`)), { once: true });
      }),
      10_000,
      "connecting to the inspector",
    );
    return new Inspector(ws);
  }

  send<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = ++this.#id;
    const answer = new Promise<T>((resolve, reject) => this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject }));
    this.#ws.send(JSON.stringify({ id, method, params }));
    return within(answer, 30_000, `inspector ${method}`);
  }

  close(): void {
    this.#ws.close();
  }
}

/** Where each line of a bundled script came from, from esbuild's `// path` module comments. */
type FileMap = (line: number) => string | null;

function fileMap(source: string): FileMap {
  const starts: Array<{ line: number; file: string }> = [];
  source.split("\n").forEach((text, line) => {
    const m = /^\/\/ ((?:[\w@.-]+\/)*[\w@.-]+\.(?:ts|js|mjs|cjs))$/.exec(text);
    if (m) starts.push({ line, file: m[1]! });
  });
  return (line) => {
    let lo = 0;
    let hi = starts.length - 1;
    let found: string | null = null;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid]!.line <= line) {
        found = starts[mid]!.file;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  };
}

/** Which side runs a file's code, when only one does. */
function sideOf(file: string): string | null {
  if (/(^|\/)durable-objects\/inbox\//.test(file) || file.endsWith("workers/conversations/commands.ts")) return "Inbox";
  if (/(^|\/)durable-objects\/session-agent\//.test(file) || /(^|\/)workers\/(runtime|agent)\//.test(file)) return "SessionAgent";
  if (/(^|\/)durable-objects\/relay\//.test(file)) return "Relay";
  if (/(^|\/)workers\/(http\/|app\.ts|index\.ts|conversations\/intake\.ts)/.test(file) || /node_modules\/hono\//.test(file)) return "Worker";
  return null;
}

/** CPU time (ms) per side, and the functions with the most self time on each. */
export interface Attribution {
  totalMs: number;
  sides: Map<string, { ms: number; top: Map<string, number> }>;
  /** The profile's typical interval between two samples (its median), µs. */
  intervalUs: number;
  /** Time between samples left out because the isolate was not running (see {@link sampleWeightsUs}), ms. */
  gapMs: number;
}

/**
 * How much CPU each sample stands for, in µs. V8 samples an isolate only while the isolate
 * runs. When it stops (its JS awaits I/O, and workerd's thread runs another isolate — under
 * wrangler dev miniflare's D1 and object wrappers —, commits SQLite, or serves the event
 * loop), no samples come until it runs again, and the interval from its last sample to the
 * next is time none of its code spent. A sample's time is the interval to the next sample,
 * as DevTools counts it, but an interval longer than twice the typical one is such a gap:
 * that sample stands for one typical interval. (Counted whole, the gaps went to whatever ran
 * last before an await, the last SQL statement or a D1 result's parse, and more than tripled
 * the CPU of a delivery into an existing session: 11.2 ms against 3.6 ms on 4 Dec.)
 */
export function sampleWeightsUs(profile: CpuProfile): { weights: number[]; intervalUs: number; gapUs: number } {
  const deltas = profile.timeDeltas
    .slice(1)
    .filter((d) => d > 0)
    .sort((a, b) => a - b);
  const intervalUs = deltas.length > 0 ? deltas[Math.floor(deltas.length / 2)]! : 0;
  let gapUs = 0;
  const weights = profile.samples.map((_, i) => {
    const next = profile.timeDeltas[i + 1] ?? 0;
    if (next <= 2 * intervalUs) return next;
    gapUs += next - intervalUs;
    return intervalUs;
  });
  return { weights, intervalUs, gapUs };
}

/** Profiles the Worker behind `port` while `work` runs. */
export async function profileWhile<T>(
  port: number,
  work: () => Promise<T>,
  intervalUs = 250,
): Promise<{ result: T; attribution: Attribution; profile: CpuProfile; sources: Map<string, string> }> {
  const inspector = await Inspector.connect(port);
  try {
    await inspector.send("Debugger.enable");
    await inspector.send("Profiler.enable");
    await inspector.send("Profiler.setSamplingInterval", { interval: intervalUs });
    await inspector.send("Profiler.start");
    const result = await work();
    const { profile } = await inspector.send<{ profile: CpuProfile }>("Profiler.stop");
    const maps = new Map<string, FileMap>();
    const sources = new Map<string, string>();
    for (const id of new Set(profile.nodes.map((n) => n.callFrame.scriptId))) {
      if (!id || id === "0") continue;
      const { scriptSource } = await inspector.send<{ scriptSource: string }>("Debugger.getScriptSource", { scriptId: id }).catch(() => ({ scriptSource: "" }));
      sources.set(id, scriptSource);
      maps.set(id, fileMap(scriptSource));
    }
    await inspector.send("Debugger.disable").catch(() => undefined);
    return { result, attribution: attribute(profile, (f) => maps.get(f.scriptId)?.(f.lineNumber) ?? null), profile, sources };
  } finally {
    inspector.close();
  }
}

function attribute(profile: CpuProfile, fileOf: (f: CallFrame) => string | null): Attribution {
  const parent = new Map<number, ProfileNode>();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n);
  const sideCache = new Map<number, string>();
  const sideOfNode = (n: ProfileNode): string => {
    const cached = sideCache.get(n.id);
    if (cached) return cached;
    let side: string | null = null;
    for (let at: ProfileNode | undefined = n; at && !side; at = parent.get(at.id)) {
      const file = fileOf(at.callFrame);
      side = file ? sideOf(file) : null;
    }
    const name = n.callFrame.functionName;
    const result = side ?? (name.startsWith("(") ? name : "unattributed JS (library continuations)");
    sideCache.set(n.id, result);
    return result;
  };
  const sides = new Map<string, { ms: number; top: Map<string, number> }>();
  let totalMs = 0;
  const { weights, intervalUs, gapUs } = sampleWeightsUs(profile);
  let idleGapUs = 0;
  profile.samples.forEach((id, i) => {
    const n = byId.get(id)!;
    const dt = weights[i]! / 1000;
    if (n.callFrame.functionName === "(idle)") {
      // An idle sample's gap was never going to be counted.
      if ((profile.timeDeltas[i + 1] ?? 0) > 2 * intervalUs) idleGapUs += (profile.timeDeltas[i + 1] ?? 0) - intervalUs;
      return;
    }
    totalMs += dt;
    const side = sideOfNode(n);
    let s = sides.get(side);
    if (!s) sides.set(side, (s = { ms: 0, top: new Map() }));
    s.ms += dt;
    const where = fileOf(n.callFrame);
    const fn = `${n.callFrame.functionName || "(anonymous)"}${where ? ` ${where.replace(/^.*node_modules\//, "")}` : ""}`;
    s.top.set(fn, (s.top.get(fn) ?? 0) + dt);
  });
  return { totalMs, sides, intervalUs, gapMs: (gapUs - idleGapUs) / 1000 };
}

/** The attribution as lines: ms per delivery per side, with its heaviest functions. */
export function describeAttribution(a: Attribution, deliveries: number, topN = 6): string[] {
  const lines = [
    `CPU ${(a.totalMs / deliveries).toFixed(2)} ms per delivery in all (${a.totalMs.toFixed(0)} ms over ${deliveries}, a sample every ${a.intervalUs} µs; idle samples and ${a.gapMs.toFixed(0)} ms of gaps while the isolate was not running left out)`,
  ];
  for (const [side, s] of [...a.sides].sort((x, y) => y[1].ms - x[1].ms)) {
    lines.push(`  ${side.padEnd(42)} ${(s.ms / deliveries).toFixed(3).padStart(8)} ms per delivery (${((100 * s.ms) / a.totalMs).toFixed(1)}%)`);
    for (const [fn, t] of [...s.top].sort((x, y) => y[1] - x[1]).slice(0, topN)) lines.push(`      ${(t / deliveries).toFixed(3).padStart(8)} ms  ${fn}`);
  }
  return lines;
}
