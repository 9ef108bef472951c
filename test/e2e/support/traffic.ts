// Steady traffic through the gateway while the suite operates the installation: one client loop
// per target, each sending a request as soon as the previous one answered (plus a short pause),
// one connection per request, until stopped or until its bounds are reached. Every answer that is
// not the expected status and every connection error is kept with the operation running at the
// time, so a failure says what caused it.
import { chat, gatewayRequest, type GatewayTarget } from './gateway-client';

export interface TrafficTarget {
  /** How the target is named in failures: `<model> via <endpoint>`. */
  readonly name: string;
  readonly gateway: GatewayTarget;
  readonly model: string;
  /** A function, so a token that expires can be re-issued per request. */
  readonly token: () => string;
}

export interface TrafficFailure {
  readonly target: string;
  readonly operation: string;
  /** Milliseconds since the traffic started. */
  readonly atMs: number;
  /** The status, or the connection error's message. */
  readonly outcome: string;
}

export interface TrafficTally {
  readonly sent: number;
  readonly answered: number;
  readonly failures: TrafficFailure[];
  /** Requests per target. */
  readonly perTarget: Record<string, number>;
  /** Requests sent and failed while each operation ran. */
  readonly perOperation: Record<string, { sent: number; failed: number }>;
  /** The slowest answer, in milliseconds. */
  readonly slowestMs: number;
}

export interface SteadyTraffic {
  /** Names the operation that failures from now on are attributed to. */
  during(operation: string): void;
  /** Ends every loop after its request in flight and returns the count. */
  stop(): Promise<TrafficTally>;
}

/**
 * Starts the loops. Bounded: each loop stops by itself after `maxMs` or `maxRequests` requests,
 * whichever comes first, so a test that never calls stop() cannot leave load behind.
 */
export function startSteadyTraffic(targets: readonly TrafficTarget[], opts: { pauseMs?: number; maxMs?: number; maxRequests?: number } = {}): SteadyTraffic {
  const pauseMs = opts.pauseMs ?? 50;
  const maxMs = opts.maxMs ?? 600000;
  const maxRequests = opts.maxRequests ?? 20000;
  const started = Date.now();
  const failures: TrafficFailure[] = [];
  const perTarget: Record<string, number> = {};
  const perOperation: Record<string, { sent: number; failed: number }> = {};
  let operation = 'steady';
  let stopping = false;
  let answered = 0;
  let slowestMs = 0;

  const loop = async (t: TrafficTarget): Promise<void> => {
    perTarget[t.name] = 0;
    while (!stopping && Date.now() - started < maxMs && perTarget[t.name] < maxRequests) {
      perTarget[t.name]++;
      const during = operation;
      const tally = (perOperation[during] ??= { sent: 0, failed: 0 });
      tally.sent++;
      try {
        const r = await gatewayRequest(t.gateway, 'POST', '/v1/chat/completions', { token: t.token(), body: chat(t.model), timeoutMs: 30000 });
        slowestMs = Math.max(slowestMs, r.totalMs);
        if (r.status === 200) answered++;
        else {
          tally.failed++;
          failures.push({ target: t.name, operation: during, atMs: Date.now() - started, outcome: `${r.status} ${r.body.slice(0, 160)}` });
        }
      } catch (err) {
        tally.failed++;
        failures.push({ target: t.name, operation: during, atMs: Date.now() - started, outcome: (err as Error).message });
      }
      await new Promise((r) => setTimeout(r, pauseMs));
    }
  };
  const loops = Promise.all(targets.map(loop));

  return {
    during(next: string) {
      operation = next;
    },
    async stop() {
      stopping = true;
      await loops;
      const sent = Object.values(perTarget).reduce((a, b) => a + b, 0);
      return { sent, answered, failures, perTarget, perOperation, slowestMs };
    },
  };
}
