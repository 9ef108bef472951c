// Raw requests to the API server that keep what client libraries hide: the status code, the
// Status message of a denial, and the `Warning` headers that carry admission warnings.
import * as https from 'node:https';
import type * as k8s from '@kubernetes/client-node';

export interface KubeResponse<T = Record<string, unknown>> {
  readonly status: number;
  readonly body: T;
  /** Admission (and deprecation) warnings, decoded from `Warning: 299 - "..."` headers. */
  readonly warnings: string[];
}

/** Decodes one RFC 7234 warning value as the API server writes it (`299 - "text"`). */
export function decodeWarning(header: string): string {
  const match = /^\d{3} \S+ "((?:[^"\\]|\\.)*)"/.exec(header);
  return match ? match[1].replace(/\\(.)/g, '$1') : header;
}

export async function kubeRequest<T = Record<string, unknown>>(
  kubeConfig: k8s.KubeConfig,
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<KubeResponse<T>> {
  const server = kubeConfig.getCurrentCluster()!.server.replace(/\/$/, '');
  const url = new URL(server + path);
  const options: https.RequestOptions = { method, headers: { accept: 'application/json' } };
  await kubeConfig.applyToHTTPSOptions(options);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  if (payload !== undefined) options.headers = { ...options.headers, 'content-type': contentType };
  return new Promise((resolve, reject) => {
    const request = https.request(url, options, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({
          status: response.statusCode ?? 0,
          body: (text ? JSON.parse(text) : {}) as T,
          warnings: (response.headersDistinct.warning ?? []).map(decodeWarning),
        });
      });
      response.on('error', reject);
    });
    request.setTimeout(30_000, () => request.destroy(new Error(`${method} ${path} timed out`)));
    request.on('error', reject);
    request.end(payload);
  });
}

/** The collection path of one of our kinds in a namespace. */
export function collectionPath(namespace: string, plural: string, version = 'v1alpha1'): string {
  return `/apis/llm.nebari.dev/${version}/namespaces/${namespace}/${plural}`;
}
