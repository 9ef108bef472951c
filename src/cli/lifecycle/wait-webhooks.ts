// `nls wait-webhooks`: waits until the API server reaches the operator's admission webhooks through
// their Service. A Ready operator pod is not enough: its address still has to reach the Service's
// EndpointSlice and every node's proxy, and until then each write of our kinds fails with
// "failed calling webhook". The chart runs this as a Helm hook after install, upgrade and rollback,
// so `helm install --wait` returns only once models can be created.
//
// The probe is a dry-run PassthroughModel create in the release namespace (nothing is stored). Any
// answer from our webhooks counts, including a denial: it proves the path, not the object.
import { API_GROUP, API_GROUP_VERSION_V1BETA1, type PassthroughModelV1beta1 } from '../../api';
import { KubeRest } from '../../kube/rest';
import { kubeConfigFrom } from './crds';
import { durationMs, parseFlags } from '../flags';
import { CHART_NAME } from './guarded-phases';
import { ExitCode, UsageError } from '../phases';
import { commandOutput } from '../output';

/** Probes in a row that found no API server before giving up (a restart of the API server is a blip, not a state). */
export const NO_API_SERVER_ATTEMPTS = 3;

export const waitWebhooksUsage = `Usage:
  nls wait-webhooks [-n|--namespace NS] [--timeout 120s] [--interval 1s] [--kubeconfig PATH] [--context NAME]
Waits until a dry-run PassthroughModel create in NS (the release namespace) is answered by the
operator's admission webhooks. Exit 0 when they answer, 5 when --timeout passes first, 1 when the
caller may not create PassthroughModels in NS, when the API server itself cannot be reached (${NO_API_SERVER_ATTEMPTS}
probes in a row) or when the server is not a Kubernetes API server, 2 for bad arguments or no
kubeconfig. Stores nothing.`;

export type ProbeOutcome =
  /** Our webhooks answered (admitted, or denied the object). */
  | 'reached'
  /** The API server could not call a webhook yet (no ready endpoint, connection refused, TLS). */
  | 'unreachable'
  /** The caller lacks RBAC to create the probe: waiting will not help. */
  | 'forbidden'
  /** The API server refused the probe object itself (a CRD this command does not match). */
  | 'invalid'
  /** No connection to the API server itself (refused, no route, unknown host): check the kubeconfig. */
  | 'no-api-server'
  /** Something answered that is not a Kubernetes API server (no Status object). */
  | 'not-kubernetes';

// Node's codes for a connection that was never made, or a host name that does not resolve.
const NO_CONNECTION = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);


/** Classifies the API server's answer to the probe (`undefined` error: admitted). */
export function probeOutcome(error?: { code?: number | string; message: string; body?: string }): ProbeOutcome {
  if (!error) return 'reached';
  // The API server's own connection, not a webhook's (those come back as the API server's 500).
  if (typeof error.code === 'string' && NO_CONNECTION.has(error.code)) return 'no-api-server';
  // Every answer of an API server but a success is a Status object; anything else is another server.
  // (A 5xx without one may be a proxy in front of a restarting API server: waited for.)
  if (typeof error.code === 'number' && error.code < 500 && typeof error.body === 'string' && !isStatusObject(error.body)) return 'not-kubernetes';
  if (/denied the request/.test(error.message)) return 'reached';
  // An RBAC refusal names the verb and resource; a webhook that cannot be called is a 500.
  if (error.code === 403 && /cannot create resource/.test(error.message)) return 'forbidden';
  // Schema validation runs after the mutating webhooks: they were reached, but the validating
  // ones were not, and the same object would be refused again.
  if (error.code === 422) return 'invalid';
  return 'unreachable';
}

function isStatusObject(body: string): boolean {
  try {
    return (JSON.parse(body) as { kind?: unknown }).kind === 'Status';
  } catch {
    return false;
  }
}

/**
 * The object the probe sends: valid under the CRD, so the validating webhook is reached as well.
 * A Bedrock backend signs with the gateway's identity and names no Secret, so the webhooks' Secret
 * check (a review the probe's narrow ServiceAccount would fail) does not apply: a probe is admitted.
 */
export function probeObject(namespace: string): PassthroughModelV1beta1 {
  return {
    apiVersion: API_GROUP_VERSION_V1BETA1,
    kind: 'PassthroughModel',
    metadata: { name: 'nls-webhook-probe', namespace },
    spec: {
      provider: { backend: { type: 'Bedrock', bedrock: { region: 'us-east-1' } } },
      models: { declared: ['probe'] },
      access: { groups: ['nls-webhook-probe'] },
    },
  };
}

export interface WaitWebhooksOptions {
  readonly namespace: string;
  readonly timeoutMs: number;
  readonly intervalMs: number;
}

/** Probes until reached, forbidden or out of time; prints one line per change of answer. */
export async function waitWebhooks(rest: KubeRest, opts: WaitWebhooksOptions, out: (line: string) => void): Promise<number> {
  const started = Date.now();
  let last = '';
  let noApiServer = 0;
  for (;;) {
    let error: { code?: number | string; message: string; body?: string } | undefined;
    try {
      await rest.create(probeObject(opts.namespace), { dryRun: true, fieldManager: 'nebari-llm-serving-cli' });
    } catch (e) {
      error = e as { code?: number | string; message: string; body?: string };
    }
    const outcome = probeOutcome(error);
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    if (outcome === 'reached') {
      out(`the API server reaches the admission webhooks (after ${seconds} s)`);
      return ExitCode.ok;
    }
    if (outcome === 'forbidden') {
      out(`error: ${error!.message}\nthe probe needs create on ${API_GROUP} passthroughmodels in ${opts.namespace} (the chart's hook Role grants it)`);
      return ExitCode.error;
    }
    if (outcome === 'not-kubernetes') {
      out(`error: the server in the kubeconfig answered ${error!.code} without a Kubernetes Status, so it is not a Kubernetes API server; check --kubeconfig and --context (answer: ${error!.message.replace(/\s+/g, ' ').slice(0, 200)})`);
      return ExitCode.error;
    }
    noApiServer = outcome === 'no-api-server' ? noApiServer + 1 : 0;
    if (noApiServer >= NO_API_SERVER_ATTEMPTS) {
      out(`error: cannot connect to the API server (${error!.message}); check --kubeconfig and --context: the webhooks can only be probed through it`);
      return ExitCode.error;
    }
    if (outcome === 'invalid') {
      out(`error: the API server refused the probe object: ${error!.message}\nare the installed CRDs those of this nls version (nls crds apply)?`);
      return ExitCode.error;
    }
    if (error!.message !== last) out(`waiting (${seconds} s): ${error!.message.replace(/\s+/g, ' ').slice(0, 300)}`);
    last = error!.message;
    if (Date.now() - started + opts.intervalMs > opts.timeoutMs) {
      out(`error: the API server did not reach the admission webhooks within ${opts.timeoutMs / 1000} s; last answer: ${last}`);
      return ExitCode.checksFailed;
    }
    await new Promise((resolve) => setTimeout(resolve, opts.intervalMs));
  }
}

/** `nls wait-webhooks ...`; returns the exit code. */
export async function runWaitWebhooks(args: string[], out: (line: string) => void = commandOutput): Promise<number> {
  let rest: KubeRest;
  let opts: WaitWebhooksOptions;
  try {
    const flags = parseFlags('wait-webhooks', args, {
      namespace: { type: 'string' },
      timeout: { type: 'string' },
      interval: { type: 'string' },
      kubeconfig: { type: 'string' },
      context: { type: 'string' },
    });
    if (flags.positionals.length > 0) throw new UsageError(`wait-webhooks: unexpected argument "${flags.positionals[0]}"\n${waitWebhooksUsage}`);
    opts = {
      namespace: flags.values.namespace ?? process.env.POD_NAMESPACE ?? `${CHART_NAME}-system`,
      timeoutMs: durationMs('timeout', flags.values.timeout ?? '120s'),
      intervalMs: durationMs('interval', flags.values.interval ?? '1s'),
    };
    rest = new KubeRest(kubeConfigFrom(flags.values.kubeconfig, flags.values.context));
  } catch (error) {
    out(`error: ${(error as Error).message}`);
    return error instanceof UsageError ? ExitCode.usage : ExitCode.error;
  }
  try {
    return await waitWebhooks(rest, opts, out);
  } finally {
    rest.close();
  }
}
