// A loopback TCP proxy in front of the API server that plays a slow one: every chunk, in either
// direction, goes out `delayMs` after it arrived. The delay can be changed at any time and
// applies to chunks already held (a large value holds traffic beyond any deadline; setting it
// back releases what is held, as when a network heals). TLS passes through untouched. An orderly
// end is passed on after the chunks before it; a client that gives up (destroys its socket, as on
// a timeout) has its held chunks dropped, like a request that was never sent.
import * as net from 'net';

export interface SlowProxy {
  /** `https://127.0.0.1:<port>`: the API server's certificate is valid for 127.0.0.1. */
  readonly url: string;
  delayMs: number;
  close(): Promise<void>;
}

export async function startSlowProxy(target: URL): Promise<SlowProxy> {
  let delayMs = 0;
  const sockets = new Set<net.Socket>();
  /** One per direction of each open connection: sends what is due and waits for the next. */
  const pumps = new Set<() => void>();

  /** Copies `from` to `to`, each chunk `delayMs` after it arrived, in order, then the end; returns a stop function. */
  function forward(from: net.Socket, to: net.Socket): () => void {
    // A null chunk stands for the end of `from`.
    const held: { arrived: number; chunk: Buffer | null }[] = [];
    let timer: NodeJS.Timeout | undefined;
    const pump = () => {
      if (timer) clearTimeout(timer);
      timer = undefined;
      while (held.length && held[0].arrived + delayMs <= Date.now()) {
        const { chunk } = held.shift()!;
        if (chunk) to.write(chunk);
        else to.end();
      }
      if (held.length) timer = setTimeout(pump, held[0].arrived + delayMs - Date.now());
    };
    const hold = (chunk: Buffer | null) => {
      held.push({ arrived: Date.now(), chunk });
      if (!timer) pump();
    };
    from.on('data', (chunk: Buffer) => hold(chunk));
    from.on('end', () => hold(null));
    pumps.add(pump);
    return () => {
      if (timer) clearTimeout(timer);
      held.length = 0;
      pumps.delete(pump);
    };
  }

  // Half-open allowed: each side's end is passed on only once what it sent before has gone out.
  const server = net.createServer({ allowHalfOpen: true }, (client) => {
    const upstream = net.connect({ port: Number(target.port), host: target.hostname, allowHalfOpen: true });
    sockets.add(client).add(upstream);
    const stops = [forward(client, upstream), forward(upstream, client)];
    const close = () => {
      for (const stop of stops) stop();
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', close).on('error', close);
    upstream.on('error', close);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  return {
    url: `https://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    get delayMs() {
      return delayMs;
    },
    set delayMs(ms: number) {
      delayMs = ms;
      for (const pump of pumps) pump();
    },
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
