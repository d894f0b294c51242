import { platformVars } from "../../test/support/e2e.ts";
import { FakeLlm } from "../../test/support/fake-llm.ts";
import { FakeDiscord, FakeSlack, FakeTelegram } from "../../test/support/fake-platforms.ts";
import { FakeHomeserver } from "../../test/support/fake-matrix.ts";
import { FakeWhatsApp } from "../../test/support/fake-whatsapp.ts";
import { serve, type LoopbackServer } from "../../test/support/http.ts";
import { startRestartableWorker, type RestartableWorker } from "../../test/support/wrangler-dev.ts";
import { onCleanup, WorkerClient } from "./harness.ts";
import { PlatformView } from "./view.ts";

/** Telegram users the bench uses: 1001 and 1002 talk, 1003 is the admin (may /resume CLI sessions). */
export const CHAOS_VARS: Record<string, string> = {
  TELEGRAM_ALLOWED_USERS: "1001,1002,1003",
  TELEGRAM_ADMIN_USERS: "1003",
  DISCORD_ALLOWED_USERS: "2001,2002",
  SLACK_ALLOWED_USERS: "U1001,U1002",
  WHATSAPP_ALLOWED_USERS: "15550001001,15550001002",
};

/** A restartable `wrangler dev`, its API, and loopback fakes of the model and the four platforms. */
export interface Stack {
  worker: RestartableWorker;
  api: WorkerClient;
  llm: FakeLlm;
  llmUrl: string;
  telegram: PlatformView;
  discord: PlatformView;
  slack: PlatformView;
  slackUrl: string;
  /** WhatsApp's Graph API (only the hostile bodies drive WhatsApp: nothing reads what it shows). */
  whatsapp: FakeWhatsApp;
  /** A Matrix homeserver (only the hostile transactions drive Matrix; each unknown room is a DM there). */
  matrix: FakeHomeserver;
  /** Clears the fakes' calls, scripts and what they show. */
  reset(): void;
  stop(): Promise<void>;
}

/** Starts the fakes and a Worker wired to them (every platform at the edge, plus `extra`). */
export async function startStack(extra: Record<string, string> = {}, opts: { discordGatewayUrl?: string } = {}): Promise<Stack> {
  const llm = new FakeLlm();
  const telegram = new PlatformView("telegram", new FakeTelegram());
  const discordApi = new FakeDiscord();
  // DISCORD_GATEWAY=on: GET /gateway/bot names the fake Gateway (bench/chaos/discord-gateway.ts).
  if (opts.discordGatewayUrl) discordApi.gatewayUrl = opts.discordGatewayUrl;
  const discord = new PlatformView("discord", discordApi);
  const slack = new PlatformView("slack", new FakeSlack());
  const whatsapp = new FakeWhatsApp();
  const matrix = new FakeHomeserver();
  matrix.unknownRoomsAreDms = true;
  const servers: LoopbackServer[] = await Promise.all([llm, telegram, discord, slack, whatsapp, matrix].map((f) => serve((r: Request) => f.handle(r))));
  const [l, t, d, s, w, m] = servers.map((x) => x.url) as [string, string, string, string, string, string];
  const closeServers = () => Promise.all(servers.map((x) => x.close()));
  let worker: RestartableWorker;
  try {
    worker = await startRestartableWorker(
      { ...platformVars({ llm: l, telegram: t, discord: d, slack: s, whatsapp: w, matrix: m }), ...CHAOS_VARS, ...extra },
      { token: "chaos-token" },
    );
  } catch (err) {
    await closeServers();
    throw err;
  }
  const forget = onCleanup(() => worker.kill());
  return {
    worker,
    api: new WorkerClient(worker.url, worker.token),
    llm,
    llmUrl: l,
    telegram,
    discord,
    slack,
    slackUrl: s,
    whatsapp,
    matrix,
    reset() {
      llm.reset();
      telegram.reset();
      discord.reset();
      slack.reset();
      whatsapp.reset();
      matrix.reset();
      matrix.unknownRoomsAreDms = true;
    },
    async stop() {
      await worker.stop();
      forget();
      await closeServers();
    },
  };
}
