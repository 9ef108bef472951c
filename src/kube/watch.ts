// Streams a watch: one JSON event per line, delivered in order. An ERROR event (for example
// 410 Gone when the resourceVersion was compacted) or an HTTP error ends the stream with a
// KubeApiError, so the caller can list again; bookmarks are delivered like any other event.
// A stream that stays silent longer than `idleTimeoutMs` ends with WatchIdleError: with bookmarks
// the API server writes every minute or two, so a longer silence means a half-open connection (the
// server or a proxy on the way went away without closing it), which would otherwise never end.
import { KubeApiError, KubeObject, KubeRest, RequestOptions, apiError } from './rest';

export interface WatchEvent<T = KubeObject> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

/** The stream was silent for longer than its idle bound; it has been closed. */
export class WatchIdleError extends Error {
  constructor(readonly path: string, readonly idleMs: number) {
    super(`watch ${path}: nothing received for ${idleMs} ms; the connection is taken for dead`);
    this.name = 'WatchIdleError';
  }
}

export interface WatchOptions {
  /** Close the stream with WatchIdleError after this long without a byte. @default no bound */
  idleTimeoutMs?: number;
  /** Called when the server has accepted the watch (200), before any event. */
  onOpen?: () => void;
}

export interface WatchHandle {
  /** Resolves when the stream ends; rejects with KubeApiError (e.g. 410) on an ERROR event or HTTP error. */
  done: Promise<void>;
  abort(): void;
}

export async function watch(
  rest: KubeRest,
  path: string,
  query: RequestOptions['query'],
  onEvent: (e: WatchEvent) => void,
  opts: WatchOptions = {},
): Promise<WatchHandle> {
  let settle!: { resolve: () => void; reject: (e: unknown) => void };
  const done = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  let finished = false;
  const finish = (err?: unknown) => {
    if (finished) return;
    finished = true;
    if (err) settle.reject(err);
    else settle.resolve();
  };
  const req = await rest.open('GET', path, { query: { ...query, watch: true } }, (res) => {
    const code = res.statusCode ?? 0;
    if (code !== 200) {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => finish(apiError('GET', path, code, Buffer.concat(chunks).toString('utf8'))));
      return;
    }
    opts.onOpen?.();
    let buffered = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      buffered += chunk;
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (!line.trim()) continue;
        let event: WatchEvent;
        try {
          event = JSON.parse(line) as WatchEvent;
        } catch {
          continue;
        }
        if (event.type === 'ERROR') {
          const status = event.object as unknown as { code?: number; reason?: string; message?: string };
          finish(new KubeApiError(status.code ?? 500, line, status.reason ?? 'Unknown', status.message ?? 'watch error'));
          req.destroy();
          return;
        }
        try {
          onEvent(event);
        } catch (err) {
          finish(err);
          req.destroy();
          return;
        }
      }
    });
    res.on('end', () => finish());
    res.on('close', () => finish());
    res.on('error', (err) => finish(err));
  });
  req.on('error', (err) => finish(err));
  // The socket's idle timer counts every byte read or written, from connecting to the last chunk.
  if (opts.idleTimeoutMs) {
    const idleMs = opts.idleTimeoutMs;
    req.setTimeout(idleMs, () => {
      finish(new WatchIdleError(path, idleMs));
      req.destroy();
    });
  }
  return {
    done,
    abort: () => {
      finish();
      req.destroy();
    },
  };
}
