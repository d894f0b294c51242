/**
 * The only network a workerd test has: a fetch that routes by origin to in-memory fakes.
 * Anything else is recorded as a violation and fails the test (see worker setup).
 */
export type Handler = (req: Request) => Response | Promise<Response>;

export class FakeNet {
  readonly #routes = new Map<string, Handler>();
  readonly violations: string[] = [];

  route(origin: string, handler: Handler): void {
    this.#routes.set(new URL(origin).origin, handler);
  }

  reset(): void {
    this.#routes.clear();
    this.violations.length = 0;
  }

  readonly fetch = async (input: Request | string | URL, init?: RequestInit): Promise<Response> => {
    const req = new Request(input, init);
    const handler = this.#routes.get(new URL(req.url).origin);
    if (!handler) {
      const what = `${req.method} ${req.url}`;
      this.violations.push(what);
      throw new Error(`unexpected outbound request in a test: ${what}`);
    }
    if (req.signal.aborted) throw req.signal.reason;
    const res = await handler(req);
    return res;
  };
}
