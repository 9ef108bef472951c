// A small HTTPS client for calling the webhook server directly over loopback TLS (server tests,
// fuzzing, benchmarks). Kept under test/unit/webhook/support so integration tests and the
// benchmark share it.
import * as https from 'node:https';

export interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

export interface PostOptions {
  readonly port: number;
  readonly path: string;
  readonly body: string | Buffer;
  /** PEM CA(s) to verify the server with. */
  readonly ca: string;
  readonly method?: string;
  readonly headers?: Record<string, string>;
  readonly agent?: https.Agent;
  readonly timeoutMs?: number;
}

export function post(options: PostOptions): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const request = https.request(
      {
        host: '127.0.0.1',
        port: options.port,
        path: options.path,
        method: options.method ?? 'POST',
        ca: options.ca,
        agent: options.agent,
        headers: { 'Content-Type': 'application/json', ...options.headers },
        timeout: options.timeoutMs ?? 10_000,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') }));
        response.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new Error(`no answer within ${options.timeoutMs ?? 10_000} ms`)));
    request.on('error', reject);
    request.end(options.body);
  });
}

/** A minimal, well-formed AdmissionReview for `object`. */
export function admissionReview(object: Record<string, unknown>, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const metadata = (object.metadata ?? {}) as { name?: string; namespace?: string };
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `uid-${Math.random().toString(16).slice(2)}`,
      kind: { group: 'llm.nebari.dev', version: 'v1alpha1', kind: object.kind },
      resource: { group: 'llm.nebari.dev', version: 'v1alpha1', resource: `${String(object.kind).toLowerCase()}s` },
      operation: 'CREATE',
      name: metadata.name,
      namespace: metadata.namespace,
      userInfo: { username: 'bench', groups: ['system:authenticated'] },
      object,
      oldObject: null,
      dryRun: false,
      ...overrides,
    },
  };
}

/**
 * True when `response` is one of the two well-formed answers: 200 with an AdmissionReview v1
 * response for `uid`, or a 4xx with a JSON Status body.
 */
export function isWellFormedAnswer(response: RawResponse, uid?: string): boolean {
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(response.body) as Record<string, unknown>;
  } catch {
    return false;
  }
  if (response.status === 200) {
    const answer = body.response as Record<string, unknown> | undefined;
    return (
      body.apiVersion === 'admission.k8s.io/v1' &&
      body.kind === 'AdmissionReview' &&
      typeof answer === 'object' &&
      typeof answer.allowed === 'boolean' &&
      typeof answer.uid === 'string' &&
      (uid === undefined || answer.uid === uid) &&
      (answer.allowed === true || typeof (answer.status as { message?: unknown } | undefined)?.message === 'string')
    );
  }
  return response.status >= 400 && response.status < 500 && body.kind === 'Status' && typeof body.message === 'string';
}
