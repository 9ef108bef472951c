// Retrying writes of API-key objects through transient API failures, shared by the key store and
// the audit log.
import { KubeApiError } from '../kube/rest';

/** Answers worth another try: conflicts, overload and server errors, dropped connections. */
export function isTransient(err: unknown): boolean {
  if (err instanceof KubeApiError) return err.code === 409 || err.code === 429 || err.code >= 500;
  const code = (err as NodeJS.ErrnoException)?.code;
  return code === 'ECONNRESET' || code === 'ECONNREFUSED' || code === 'EPIPE' || /timed out/.test(String((err as Error)?.message));
}

/**
 * Runs `attempt` until it succeeds, retrying transient failures with jittered exponential backoff
 * (so retries of many writers spread out) until `deadline`; bounded by time, not by a count.
 */
export async function retryTransient<T>(deadline: number, attempt: () => Promise<T>): Promise<T> {
  for (let n = 0; ; n++) {
    try {
      return await attempt();
    } catch (err) {
      if (!isTransient(err) || Date.now() >= deadline) throw err;
      const delay = Math.random() * Math.min(2000, 50 * 2 ** Math.min(n, 6));
      await new Promise((r) => setTimeout(r, Math.min(delay, Math.max(0, deadline - Date.now()))));
    }
  }
}
