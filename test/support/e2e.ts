import { execFile, spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { PROJECT_ROOT } from "../../cli/local.ts";
import { FakeDiscordGateway } from "./fake-discord-gateway.ts";
import { FakeLlm } from "./fake-llm.ts";
import { FakeDiscord, FakeFiles, FakeSlack, FakeTelegram } from "./fake-platforms.ts";
import { FakeHomeserver } from "./fake-matrix.ts";
import { FakeWhatsApp } from "./fake-whatsapp.ts";
import { serve, type LoopbackServer } from "./http.ts";
import { DISCORD_TEST, DISCORD_TEST_PUBLIC_KEY, MATRIX_TEST, SLACK_TEST, TELEGRAM_TEST, WHATSAPP_TEST } from "./signing.ts";
import { startBundledWorker, type E2eWorker } from "./bundled-worker.ts";

/**
 * The Workers the end-to-end files share (they run one after another in one process: see
 * vitest.config.ts), each the deploy bundle in miniflare (test/support/bundled-worker.ts),
 * with every platform pointed at loopback fakes and the model at a fake provider. Starting
 * them once keeps the suite fast.
 */
export interface Harness {
  worker: E2eWorker;
  llm: FakeLlm;
  telegram: FakeTelegram;
  discord: FakeDiscord;
  /** Discord's Gateway (`GET /gateway/bot` on the REST fake names it); the shared Worker connects to it (DISCORD_GATEWAY=on). */
  gateway: FakeDiscordGateway;
  slack: FakeSlack;
  /** WhatsApp's Graph API (`WHATSAPP_API_BASE` points at it). */
  whatsapp: FakeWhatsApp;
  /** A Matrix homeserver's client-server API (`MATRIX_HOMESERVER_URL` points at it). */
  matrix: FakeHomeserver;
  /** Slack's file host (wants the bot token), on loopback at `slackFilesUrl`. */
  slackFiles: FakeFiles;
  slackFilesUrl: string;
  /** Discord's CDN (signed URLs, no token), on loopback at `cdnUrl`. */
  cdn: FakeFiles;
  cdnUrl: string;
  /** Clears every fake's calls and scripts. */
  reset(): void;
}

/** WhatsApp numbers the e2e Worker allows (15550002001-15550002009: the e2e suites'). */
const WHATSAPP_E2E_USERS = "15550002001,15550002002,15550002009";

/** Settings every e2e Worker shares (platform fakes and the model at `urls`; WhatsApp when its fake's url is given). */
export function platformVars(urls: {
  llm: string;
  telegram: string;
  discord: string;
  slack: string;
  whatsapp?: string;
  matrix?: string;
}): Record<string, string> {
  const matrix: Record<string, string> = urls.matrix
    ? {
        MATRIX_HOMESERVER_URL: urls.matrix,
        MATRIX_AS_TOKEN: MATRIX_TEST.asToken,
        MATRIX_HS_TOKEN: MATRIX_TEST.hsToken,
        MATRIX_BOT_USER: MATRIX_TEST.bot,
        // @alice is an admin (/sethome); @bob only talks.
        MATRIX_ALLOWED_USERS: "@alice:example.org,@bob:example.org",
        MATRIX_ADMIN_USERS: "@alice:example.org",
      }
    : {};
  const whatsapp: Record<string, string> = urls.whatsapp
    ? {
        WHATSAPP_ACCESS_TOKEN: WHATSAPP_TEST.token,
        WHATSAPP_APP_SECRET: WHATSAPP_TEST.appSecret,
        WHATSAPP_VERIFY_TOKEN: WHATSAPP_TEST.verifyToken,
        WHATSAPP_PHONE_NUMBER_ID: WHATSAPP_TEST.phoneNumberId,
        WHATSAPP_ALLOWED_USERS: WHATSAPP_E2E_USERS,
        WHATSAPP_API_BASE: `${urls.whatsapp}/v23.0`,
      }
    : {};
  return {
    ...whatsapp,
    ...matrix,
    LLM_BASE_URL: `${urls.llm}/v1`,
    LLM_MODEL: "fake",
    LLM_API_KEY: "test-llm-key",
    TELEGRAM_BOT_TOKEN: TELEGRAM_TEST.token,
    TELEGRAM_WEBHOOK_SECRET: TELEGRAM_TEST.secret,
    // 1005: the handoff-chats run's Telegram user (its DM has no history from other suites).
    TELEGRAM_ALLOWED_USERS: "1001,1002,1004,1005",
    // /sethome is for admins only: 1001 sets the forum as home in the handoff and console runs.
    TELEGRAM_ADMIN_USERS: "1001",
    TELEGRAM_API_ROOT: urls.telegram,
    DISCORD_APPLICATION_ID: DISCORD_TEST.applicationId,
    DISCORD_PUBLIC_KEY: DISCORD_TEST_PUBLIC_KEY,
    DISCORD_BOT_TOKEN: DISCORD_TEST.botToken,
    DISCORD_ALLOWED_USERS: "2001",
    DISCORD_API_BASE: `${urls.discord}/api/v10`,
    SLACK_BOT_TOKEN: SLACK_TEST.token,
    SLACK_SIGNING_SECRET: SLACK_TEST.secret,
    SLACK_ALLOWED_USERS: "U1001",
    // U1001 parks a session for the CLI (/handoff cli, admins only) in the handoff-chats run.
    SLACK_ADMIN_USERS: "U1001",
    SLACK_API_URL: `${urls.slack}/api/`,
  };
}

/** Starts fakes on loopback and a Worker wired to them. */
export async function startHarness(extra: Record<string, string> = {}): Promise<Harness & { llmUrl: string; stop(): Promise<void> }> {
  const llm = new FakeLlm();
  const telegram = new FakeTelegram();
  const discord = new FakeDiscord();
  const slack = new FakeSlack();
  const whatsapp = new FakeWhatsApp();
  const matrix = new FakeHomeserver();
  const slackFiles = new FakeFiles(SLACK_TEST.token);
  const cdn = new FakeFiles();
  const servers: LoopbackServer[] = await Promise.all([llm, telegram, discord, slack, slackFiles, cdn, whatsapp, matrix].map((f) => serve((r) => f.handle(r))));
  const gateway = await new FakeDiscordGateway().start();
  discord.gatewayUrl = gateway.url;
  const [l, t, d, s, sf, c, w, m] = servers.map((x) => x.url) as [string, string, string, string, string, string, string, string];
  const worker = await startBundledWorker({ ...platformVars({ llm: l, telegram: t, discord: d, slack: s, whatsapp: w, matrix: m }), ...extra });
  return {
    worker,
    llmUrl: l,
    llm,
    telegram,
    discord,
    gateway,
    slack,
    whatsapp,
    matrix,
    slackFiles,
    slackFilesUrl: sf,
    cdn,
    cdnUrl: c,
    reset() {
      llm.reset();
      telegram.reset();
      discord.reset();
      slack.reset();
      whatsapp.reset();
      matrix.reset();
      slackFiles.reset();
      cdn.reset();
    },
    async stop() {
      await worker.stop();
      await Promise.all([...servers.map((x) => x.close()), gateway.stop()]);
    },
  };
}

/**
 * How the e2e tests run the real CLI (`spawn(process.execPath, [...CLI, ...args])`): bin.js
 * on a Node without type stripping takes its other path, the JavaScript bundle in dist/ that
 * the package ships, built from the sources once per run before the first harness resolves
 * (`cli/build.mjs`, what `npm pack` runs). A CLI process costs about 0.1 s of CPU on the
 * bundle against 0.4 s on the sources, which Node strips file by file at every start; the
 * e2e suites start about 15 (the chat, handoff and the relay gateway). The sources are what
 * the node project's in-process CLI tests run.
 */
export const CLI = ["--no-experimental-strip-types", path.join(PROJECT_ROOT, "cli", "bin.js")];

/** A `hermes-edge gateway` process the e2e tests started: its exit code, stderr so far, and a wait for a line in it. */
export interface GatewayProcess {
  child: ChildProcess;
  exit: Promise<number>;
  stderr(): string;
  /** Resolves once stderr holds `text` (the test's own timeout bounds it). */
  waitFor(text: string): Promise<void>;
}

/** Starts `hermes-edge gateway <args>` as the shipped bundle ({@link CLI}), with `env` over this process's environment. */
export function startGateway(args: string[], env: Record<string, string>): GatewayProcess {
  const child = spawn(process.execPath, [...CLI, "gateway", ...args], { env: { ...process.env, NO_COLOR: "1", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  const waiters: Array<() => void> = [];
  child.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
    for (const w of waiters.splice(0)) w();
  });
  const exit = new Promise<number>((r) => child.on("close", (c) => r(c ?? -1)));
  return {
    child,
    exit,
    stderr: () => err,
    async waitFor(text: string) {
      while (!err.includes(text)) await new Promise<void>((r) => waiters.push(r));
    },
  };
}

type Started = Harness & { llmUrl: string; stop(): Promise<void> };
let shared: Promise<Started> | null = null;
let relayed: Promise<Started> | null = null;

/** Settings of the relay harness: Telegram's and WhatsApp's turns run on a gateway with this id and secret. */
export const RELAY_E2E = { gatewayId: "laptop", secret: "e2e-relay-secret" };

/** The gateway that bridges Signal on the relaying Worker, and the Signal users it allows (UUIDs; the first is an admin). */
export const SIGNAL_E2E = {
  gatewayId: "signalbox",
  secret: "e2e-signal-secret",
  users: ["1a111111-1111-4111-8111-111111111111", "2b222222-2222-4222-8222-222222222222"],
} as const;

function startBoth(): void {
  if (shared && relayed) return;
  // The relaying Worker starts once the shared one answers: the first suites need only the
  // shared one, which comes up sooner without a second one booting beside it; the relay
  // suite runs later, by when the second has started behind the first tests.
  // (Once: every harness() call added two exit listeners, and Node warned of a leak.)
  // The shared Worker holds Discord's Gateway (to the fake one): test/e2e/discord-gateway.e2e.ts.
  const cliBuilt = promisify(execFile)(process.execPath, [path.join(PROJECT_ROOT, "cli", "build.mjs")], { cwd: PROJECT_ROOT });
  shared = Promise.all([startHarness({ DISCORD_GATEWAY: "on" }), cliBuilt]).then(([h]) => h);
  const relaying = {
    RELAY_PLATFORMS: "telegram,whatsapp",
    RELAY_SECRETS: `${RELAY_E2E.gatewayId}:${RELAY_E2E.secret},${SIGNAL_E2E.gatewayId}:${SIGNAL_E2E.secret}`,
    // Signal, bridged by a gateway of its own (test/e2e/signal.e2e.ts).
    BRIDGE_PLATFORMS: `signal:${SIGNAL_E2E.gatewayId}`,
    SIGNAL_ALLOWED_USERS: SIGNAL_E2E.users.join(","),
    SIGNAL_ADMIN_USERS: SIGNAL_E2E.users[0],
  };
  relayed = shared.catch(() => undefined).then(() => Promise.all([startHarness(relaying), cliBuilt]).then(([h]) => h));
  for (const p of [shared, relayed]) void p.then((h) => process.once("exit", () => h.worker.kill())).catch(() => undefined);
}

/** The shared harness (every platform at the edge), started on first use. */
export function harness(): Promise<Started> {
  startBoth();
  return shared!;
}

/** The harness whose Worker relays Telegram and WhatsApp to a gateway. */
export function relayHarness(): Promise<Started> {
  startBoth();
  return relayed!;
}

/** Stops the harnesses that were started (after the last e2e suite); the Workers' storage goes with them. */
export async function stopHarnesses(): Promise<void> {
  const started = [shared, relayed].filter((p): p is Promise<Started> => p !== null);
  shared = null;
  relayed = null;
  await Promise.all(started.map((p) => p.then((h) => h.stop()).catch(() => undefined)));
}
