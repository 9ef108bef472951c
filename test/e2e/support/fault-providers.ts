// Stand-in providers that misbehave on request, for the routing tests (test/e2e/routing.test.ts):
// one HTTPS server per host name on the node address, each on its own port so that stopping one
// refuses connections to that provider only. A test sets each provider's behaviour (answer, fail
// with a status, fail every other request, reset the connection, stall, stream slowly) and reads
// back every attempt that reached it, with its arrival time.
import * as https from 'https';
import type * as net from 'net';
import { issueServingCertificate, type KeyPair } from '../../../src/webhook/certificates';
import { NODE_ADDRESS } from '../../support/node';

/** Host names and ports of the routing stand-ins; dataplane.test.ts adds the names to CoreDNS. */
export const ROUTING_STAND_INS = {
  flaky: { hostname: 'api.flaky.example', port: 8601 },
  primary: { hostname: 'api.primary.example', port: 8602 },
  backup: { hostname: 'api.backup.example', port: 8603 },
  slow: { hostname: 'api.slow.example', port: 8604 },
  canary: { hostname: 'api.canary.example', port: 8605 },
} as const;
export type RoutingStandIn = keyof typeof ROUTING_STAND_INS;

export type Behaviour =
  | { readonly kind: 'answer' }
  | { readonly kind: 'status'; readonly status: number }
  /** The 1st, 3rd, 5th … attempt fails with `status`, the others are answered. */
  | { readonly kind: 'everyOther'; readonly status: number }
  | { readonly kind: 'reset' }
  | { readonly kind: 'stall' }
  /** A streamed answer of `chunks` pieces, one every `intervalMs` (headers at once). */
  | { readonly kind: 'slowStream'; readonly chunks: number; readonly intervalMs: number };

export interface Attempt {
  readonly at: number;
  readonly model?: string;
  /** What the stand-in did with it. */
  readonly outcome: string;
}

export interface FaultyProvider {
  readonly attempts: Attempt[];
  behave(behaviour: Behaviour): void;
  /** Stop listening: connections are refused until `start`. */
  stop(): Promise<void>;
  start(): Promise<void>;
}

function completion(model: string): string {
  return JSON.stringify({
    id: 'chatcmpl-fault', object: 'chat.completion', created: 1767225600, model,
    choices: [{ index: 0, message: { role: 'assistant', content: 'pong' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
  });
}

function chunk(model: string, content: string, finish: string | null): string {
  return `data: ${JSON.stringify({ id: 'chatcmpl-fault', object: 'chat.completion.chunk', created: 1767225600, model, choices: [{ index: 0, delta: { content }, finish_reason: finish }] })}\n\n`;
}

async function startOne(ca: KeyPair, hostname: string, port: number): Promise<FaultyProvider> {
  const serving = issueServingCertificate({ ca, dnsNames: [hostname] });
  const attempts: Attempt[] = [];
  const sockets = new Set<net.Socket>();
  let behaviour: Behaviour = { kind: 'answer' };
  let count = 0;
  const server = https.createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    const body: Buffer[] = [];
    req.on('data', (c: Buffer) => body.push(c));
    req.on('end', () => {
      let model: string | undefined;
      try {
        model = (JSON.parse(Buffer.concat(body).toString('utf8') || '{}') as { model?: string }).model;
      } catch {
        model = undefined;
      }
      count++;
      const b = behaviour;
      const record = (outcome: string) => attempts.push({ at: Date.now(), model, outcome });
      if (b.kind === 'status' || (b.kind === 'everyOther' && count % 2 === 1)) {
        record(`status ${b.status}`);
        res.writeHead(b.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `stand-in failure ${b.status}` } }));
        return;
      }
      if (b.kind === 'reset') {
        record('reset');
        req.socket.destroy();
        return;
      }
      if (b.kind === 'stall') {
        record('stall');
        return;
      }
      if (b.kind === 'slowStream') {
        record('slowStream');
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        let sent = 0;
        const timer = setInterval(() => {
          sent++;
          if (sent < b.chunks) {
            res.write(chunk(model ?? '', `p${sent}`, null));
            return;
          }
          clearInterval(timer);
          res.end(chunk(model ?? '', `p${sent}`, 'stop') + 'data: [DONE]\n\n');
        }, b.intervalMs);
        res.on('close', () => clearInterval(timer));
        return;
      }
      record('answer');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(completion(model ?? ''));
    });
  });
  server.on('connection', (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const listen = () => new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, NODE_ADDRESS, () => resolve()));
  await listen();
  return {
    attempts,
    behave: (next) => {
      behaviour = next;
      count = 0;
    },
    stop: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
    start: listen,
  };
}

/** Every routing stand-in, answering normally. */
export async function startFaultyProviders(ca: KeyPair): Promise<Record<RoutingStandIn, FaultyProvider>> {
  const entries = await Promise.all(Object.entries(ROUTING_STAND_INS).map(async ([name, s]) => [name, await startOne(ca, s.hostname, s.port)] as const));
  return Object.fromEntries(entries) as Record<RoutingStandIn, FaultyProvider>;
}
