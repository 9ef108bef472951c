// `nls smoke`: the final check with real clients and credentials. For every LLMModel and
// PassthroughModel of the release namespace, on every enabled endpoint, it asks the gateway for
// `/v1/models` and a one-token chat completion, as a client would: external endpoints with an API
// key (`--key`, or one minted for the run and revoked at its end), internal ones with an OIDC
// token (`--token`). Host names come from the operator's own settings, derived by the operator's
// own code. The decisions (plan, verdict, fix, table) are pure, in ./smoke-checks.
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as net from 'node:net';
import * as tls from 'node:tls';
import { API_GROUP_VERSION_V1BETA1 } from '../../api/common';
import type { LLMModelV1beta1, PassthroughModelV1beta1 } from '../../api/v1beta1';
import { mintKey, revokeKey, type MintedKey } from '../../api-keys/key-store';
import { KubeRest, type KubeObject } from '../../kube/rest';
import type { EndpointName } from '../../translate/gateway';
import type { ModelKind } from '../../translate/keys/api-keys';
import { durationMs, parseFlags } from '../flags';
import { CHART_NAME } from '../lifecycle/guarded-phases';
import { kubeConfigFrom } from '../kubeconfig';
import { commandOutput } from '../output';
import { ExitCode, UsageError } from '../phases';
import {
  addressFor,
  answerBody,
  classify,
  listenerPort,
  notSentRow,
  operatorEndpoints,
  parseKeyFlags,
  parseResolve,
  planChecks,
  skippedRow,
  smokeModel,
  smokeSummary,
  smokeTable,
  unmatchedModelFlags,
  type EndpointTarget,
  type Outcome,
  type PlannedCheck,
  type ResolveEntry,
  type SmokeModel,
  type SmokeRow,
} from './smoke-checks';

export const smokeUsage = `Usage:
  nls smoke [--namespace NS] [--release NAME] [--model NAME]... [--key MODEL=KEY]... [--token JWT | --token-file PATH]
            [--resolve HOST:PORT:ADDRESS]... [--cacert PATH] [--insecure-skip-tls-verify] [--timeout DURATION]
            [--key-wait DURATION] [--output text|json] [--kubeconfig PATH] [--context NAME]
Calls every LLMModel and PassthroughModel of the namespace through the gateway as a client would:
per enabled endpoint and model name, GET /v1/models (the name is listed) and a one-token
POST /v1/chat/completions (an answer with choices; POST /anthropic/v1/messages for Anthropic models). Prints one row per check with the likely fix of
a failure; exit 0 when nothing failed, 1 when a check failed, 2 on bad arguments.
  -n, --namespace NS    the release namespace, where the models live (default ${CHART_NAME}-system)
  --release NAME        the release whose operator settings give the endpoint host names (default ${CHART_NAME})
  --model NAME          check only this model (object name or model name; repeatable)
  --key MODEL=KEY       use this API key for the model's external endpoint (repeatable); without it a
                        key is minted for the run (as nls keys mint, expiring minutes later) and revoked at its end
  --token JWT           OIDC token for the internal endpoints; without it they are reported as skipped
  --token-file PATH     read the token from a file instead
  --resolve HOST:PORT:ADDRESS
                        connect to ADDRESS for HOST:PORT, as curl does, when DNS does not resolve the
                        endpoint host to the gateway (repeatable)
  --cacert PATH         also trust this CA (PEM) for the gateway's certificate
  --insecure-skip-tls-verify
                        do not verify the gateway's certificate (never for production checks)
  --timeout DURATION    per request (default 30s)
  --key-wait DURATION   how long a minted key may take to be accepted by the gateway (default 60s)
  -o, --output text|json
  --kubeconfig PATH, --context NAME   which cluster`;

export interface SmokeOptions {
  readonly namespace: string;
  readonly release: string;
  readonly kubeconfig?: string;
  readonly context?: string;
  readonly output: 'text' | 'json';
  /** --model: object names or model names to keep (empty: all). */
  readonly models: readonly string[];
  /** --key: API key by model object name. */
  readonly keys: ReadonlyMap<string, string>;
  readonly token?: string;
  readonly tokenFile?: string;
  readonly resolve: readonly ResolveEntry[];
  readonly cacert?: string;
  readonly insecure: boolean;
  readonly timeoutMs: number;
  readonly keyWaitMs: number;
}

/** Parse `smoke` arguments; errors name the flag and the fix. */
export function parseSmokeArgs(args: readonly string[]): SmokeOptions {
  const { values: f, positionals } = parseFlags('smoke', args, {
    namespace: { type: 'string' },
    release: { type: 'string' },
    kubeconfig: { type: 'string' },
    context: { type: 'string' },
    output: { type: 'string' },
    model: { type: 'string', multiple: true },
    key: { type: 'string', multiple: true },
    token: { type: 'string' },
    'token-file': { type: 'string' },
    resolve: { type: 'string', multiple: true },
    cacert: { type: 'string' },
    'insecure-skip-tls-verify': { type: 'boolean' },
    timeout: { type: 'string' },
    'key-wait': { type: 'string' },
  });
  if (positionals.length > 0) throw new UsageError(`smoke: unexpected argument "${positionals[0]}"\n${smokeUsage}`);
  const output = f.output ?? 'text';
  if (output !== 'text' && output !== 'json') throw new UsageError(`smoke: --output "${output}" is not supported; use text or json`);
  if (f.token !== undefined && f['token-file'] !== undefined) throw new UsageError('smoke: give --token or --token-file, not both');
  if (f.token === '') throw new UsageError('smoke: --token is empty; give the OIDC token (a JWT) or leave the flag out');
  const timeoutMs = durationMs('timeout', f.timeout ?? '30s');
  if (timeoutMs <= 0) throw new UsageError(`smoke: --timeout "${f.timeout}" must be longer than zero`);
  return {
    namespace: f.namespace ?? `${CHART_NAME}-system`,
    release: f.release ?? CHART_NAME,
    kubeconfig: f.kubeconfig,
    context: f.context,
    output,
    models: f.model ?? [],
    keys: parseKeyFlags(f.key ?? []),
    token: f.token,
    tokenFile: f['token-file'],
    resolve: (f.resolve ?? []).map(parseResolve),
    cacert: f.cacert,
    insecure: f['insecure-skip-tls-verify'] ?? false,
    timeoutMs,
    keyWaitMs: durationMs('key-wait', f['key-wait'] ?? '60s'),
  };
}

/** How requests reach the gateway. */
export interface Connection {
  readonly resolve: readonly ResolveEntry[];
  /** Extra trusted CA certificates (PEM), added to Node's own roots. */
  readonly ca?: string;
  readonly insecure: boolean;
  readonly timeoutMs: number;
}

export interface SmokeRequest {
  readonly target: EndpointTarget;
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly bearer: string;
  readonly body?: string;
}

/** The Messages API version Anthropic's SDKs send. */
const ANTHROPIC_VERSION = '2023-06-01';

/** The most of a body kept: a /v1/models catalog fits, a runaway answer does not fill memory. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

/**
 * One HTTPS request as a client sends it: SNI and Host are the endpoint host name while the TCP
 * connection may go to a --resolve address; a fresh connection each time (agent: false), so a
 * check never rides on a connection an earlier check opened. Never rejects: errors are outcomes.
 */
export function sendRequest(req: SmokeRequest, conn: Connection): Promise<Outcome> {
  const { hostname, port } = req.target;
  const started = Date.now();
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: Omit<Outcome, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...outcome, latencyMs: Date.now() - started });
    };
    const headers: Record<string, string> = {
      host: port === 443 ? hostname : `${hostname}:${port}`,
      authorization: `Bearer ${req.bearer}`,
      accept: 'application/json',
      // Anthropic's API requires its version header; the gateway passes it on.
      ...(req.path.startsWith('/anthropic/') ? { 'anthropic-version': ANTHROPIC_VERSION } : {}),
      ...(req.body !== undefined ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(req.body)) } : {}),
    };
    const request = https.request(
      {
        host: addressFor(conn.resolve, hostname, port),
        port,
        method: req.method,
        path: req.path,
        headers,
        // SNI cannot carry an IP address; for a name it selects the listener's certificate.
        ...(net.isIP(hostname) ? {} : { servername: hostname }),
        agent: false,
        rejectUnauthorized: !conn.insecure,
        ...(conn.ca ? { ca: [...tls.rootCertificates, conn.ca] } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size <= MAX_BODY_BYTES) chunks.push(chunk);
        });
        res.on('end', () => finish({ status: res.statusCode, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', (err: NodeJS.ErrnoException) => finish({ error: { code: err.code, message: err.message } }));
      },
    );
    // The whole request, not only idle time, is bounded: a model that streams slowly still ends.
    const timer = setTimeout(() => {
      finish({ error: { code: 'ETIMEDOUT', message: `no answer within ${conn.timeoutMs} ms` } });
      request.destroy();
    }, conn.timeoutMs);
    request.on('error', (err: NodeJS.ErrnoException) => finish({ error: { code: err.code, message: err.message } }));
    request.end(req.body);
  });
}

/** What `nls smoke` reads and writes in the cluster; `runSmoke` takes another for tests. */
export interface SmokeCluster {
  /** The LLMModels and PassthroughModels of the namespace (not being deleted). */
  models(): Promise<SmokeModel[]>;
  /** Host name and port of each endpoint, as the operator derives them. */
  endpoints(): Promise<Record<EndpointName, EndpointTarget>>;
  mint(model: SmokeModel, expiresAt: Date): Promise<MintedKey>;
  revoke(model: SmokeModel, clientId: string): Promise<void>;
  close(): void;
}

type OperatorDeployment = KubeObject & { spec: { template: { spec: { containers: { name: string; env?: { name: string; value?: string }[] }[] } } } };

/** The cluster behind the kubeconfig. */
export function kubeSmokeCluster(opts: SmokeOptions): SmokeCluster {
  const kc = kubeConfigFrom(opts.kubeconfig, opts.context);
  const rest = new KubeRest(kc);
  const user = kc.getCurrentUser()?.name ?? process.env.USER ?? 'unknown';
  const ref = (m: SmokeModel) => ({ kind: m.kind, name: m.name, namespace: opts.namespace });
  return {
    async models() {
      const found: SmokeModel[] = [];
      for (const kind of ['LLMModel', 'PassthroughModel'] as ModelKind[]) {
        if (!(await rest.isServed(API_GROUP_VERSION_V1BETA1, kind))) continue;
        const { items } = await rest.list(API_GROUP_VERSION_V1BETA1, kind, { namespace: opts.namespace });
        found.push(...items.filter((o) => !o.metadata.deletionTimestamp).map((o) => smokeModel(o as unknown as LLMModelV1beta1 | PassthroughModelV1beta1)));
      }
      return found.sort((a, b) => a.name.localeCompare(b.name) || a.kind.localeCompare(b.kind));
    },
    async endpoints() {
      // The operator's settings are its Deployment's environment, parsed by the operator's own function.
      const { items } = await rest.list<OperatorDeployment>('apps/v1', 'Deployment', {
        namespace: opts.namespace,
        labelSelector: `app.kubernetes.io/instance=${opts.release},app.kubernetes.io/component=operator`,
      });
      if (items.length !== 1) throw new UsageError(`found ${items.length} operator Deployments of release ${opts.release} in ${opts.namespace}, so the endpoint host names are unknown; check --release and --namespace`);
      const containers = items[0].spec.template.spec.containers;
      const env = Object.fromEntries(((containers.find((c) => c.name === 'operator') ?? containers[0])?.env ?? []).map((e) => [e.name, e.value ?? '']));
      const endpoints = operatorEndpoints(env, `Deployment ${opts.namespace}/${items[0].metadata.name}`);
      const target = async (name: EndpointName): Promise<EndpointTarget> => {
        const e = endpoints[name];
        // Reading the Gateway may be forbidden to this user; the published URL's port (443) then stands.
        const gateway = await rest.get({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name: e.gatewayName, namespace: e.gatewayNamespace } }).catch(() => undefined);
        return { hostname: e.hostname, port: listenerPort(gateway as Parameters<typeof listenerPort>[0], e.sectionName) };
      };
      return { external: await target('external'), internal: await target('internal') };
    },
    mint: (model, expiresAt) =>
      mintKey(rest, ref(model), user, 'nls smoke (revoked when the run ends)', { grantedBy: 'admin', source: 'cli', actor: user, expiresAt, waitMs: 30_000 }),
    async revoke(model, clientId) {
      await revokeKey(rest, ref(model), clientId, { actor: user, reason: 'nls smoke finished' });
    },
    close: () => rest.close(),
  };
}

/** The request of a planned check. */
function requestOf(p: PlannedCheck, bearer: string): SmokeRequest {
  return p.check === 'GET /v1/models'
    ? { target: p.target, method: 'GET', path: '/v1/models', bearer }
    : { target: p.target, method: 'POST', path: p.check.slice('POST '.length), bearer, body: answerBody(p.modelId) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `nls smoke ...`; returns the exit code. */
export async function runSmoke(args: string[], out: (line: string) => void = commandOutput, connect: (opts: SmokeOptions) => SmokeCluster = kubeSmokeCluster): Promise<number> {
  let opts: SmokeOptions;
  let conn: Connection;
  let token: string | undefined;
  let cluster: SmokeCluster;
  try {
    opts = parseSmokeArgs(args);
    token = opts.token ?? (opts.tokenFile !== undefined ? readFlagFile('token-file', opts.tokenFile).trim() : undefined);
    if (token === '') throw new UsageError(`smoke: --token-file ${opts.tokenFile} is empty; write the OIDC token into it`);
    conn = { resolve: opts.resolve, insecure: opts.insecure, timeoutMs: opts.timeoutMs, ...(opts.cacert !== undefined ? { ca: readFlagFile('cacert', opts.cacert) } : {}) };
    cluster = connect(opts);
  } catch (error) {
    out(`error: ${(error as Error).message}`);
    return error instanceof UsageError ? ExitCode.usage : ExitCode.error;
  }
  try {
    const models = await cluster.models();
    const unknown = [...unmatchedModelFlags(models, opts.models), ...[...opts.keys.keys()].filter((k) => !models.some((m) => m.name === k))];
    if (unknown.length > 0) throw new UsageError(`smoke: no LLMModel or PassthroughModel ${unknown.map((n) => `"${n}"`).join(', ')} in namespace ${opts.namespace}; check --model, --key and --namespace`);
    if (models.length === 0) {
      if (opts.output === 'json') out('[]');
      else out(`no LLMModel or PassthroughModel in namespace ${opts.namespace}; nothing to check`);
      return ExitCode.ok;
    }
    const planned = planChecks(models, await cluster.endpoints(), { only: opts.models, hasToken: token !== undefined });
    const { rows, revokeErrors } = await runChecks(planned, cluster, opts, conn, token);
    if (opts.output === 'json') out(JSON.stringify(rows, null, 2));
    else for (const line of [...smokeTable(rows), smokeSummary(rows)]) out(line);
    for (const line of revokeErrors) out(`error: ${line}`);
    return rows.some((r) => r.result === 'fail') || revokeErrors.length > 0 ? ExitCode.error : ExitCode.ok;
  } catch (error) {
    out(`error: ${(error as Error).message}`);
    return error instanceof UsageError ? ExitCode.usage : ExitCode.error;
  } finally {
    cluster.close();
  }
}

function readFlagFile(flag: string, file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`smoke: --${flag} ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); give the path of a readable file`);
  }
}

interface ExternalKey {
  readonly apiKey?: string;
  /** Minted for this run: the gateway may not accept it for a few seconds. */
  readonly mintedAt?: number;
  /** Why no key could be minted. */
  readonly mintError?: string;
}

/**
 * Sends the planned checks. Keys minted here are revoked in `finally`, whatever happens in between;
 * each expires minutes after the run anyway, in case the process is killed before it revokes.
 */
async function runChecks(planned: readonly PlannedCheck[], cluster: SmokeCluster, opts: SmokeOptions, conn: Connection, token: string | undefined): Promise<{ rows: SmokeRow[]; revokeErrors: string[] }> {
  const rows: SmokeRow[] = [];
  const revokeErrors: string[] = [];
  const keys = new Map<string, ExternalKey>();
  const minted: { model: SmokeModel; clientId: string; expiresAt: Date }[] = [];
  try {
    for (const p of planned) {
      if (p.skip || p.endpoint !== 'external' || keys.has(p.model.name)) continue;
      const given = opts.keys.get(p.model.name);
      if (given !== undefined) {
        keys.set(p.model.name, { apiKey: given });
        continue;
      }
      // The shortest lifetime that outlasts the run: the propagation wait, every check's timeout, a minute's margin.
      const checks = planned.filter((q) => q.model === p.model && q.endpoint === 'external').length;
      const expiresAt = new Date(Date.now() + opts.keyWaitMs + checks * opts.timeoutMs + 60_000);
      try {
        const key = await cluster.mint(p.model, expiresAt);
        minted.push({ model: p.model, clientId: key.clientId, expiresAt });
        keys.set(p.model.name, { apiKey: key.apiKey, mintedAt: Date.now() });
      } catch (err) {
        keys.set(p.model.name, { mintError: (err as Error).message });
      }
    }
    const accepted = new Set<string>();
    for (const p of planned) {
      if (p.skip) {
        rows.push(skippedRow(p));
        continue;
      }
      const key = p.endpoint === 'external' ? keys.get(p.model.name) : undefined;
      if (key?.mintError) {
        rows.push(notSentRow(p, `no API key: minting one failed (${key.mintError})`, 'pass --key MODEL=KEY, or check that the operator is running and has processed the model'));
        continue;
      }
      const bearer = p.endpoint === 'external' ? key!.apiKey! : token!;
      let outcome = await sendRequest(requestOf(p, bearer), conn);
      // A fresh key reaches Envoy through the operator and the gateway controller: until then 401/403.
      while (key?.mintedAt !== undefined && !accepted.has(p.model.name) && (outcome.status === 401 || outcome.status === 403) && Date.now() - key.mintedAt < opts.keyWaitMs) {
        await sleep(2000);
        outcome = await sendRequest(requestOf(p, bearer), conn);
      }
      if (p.endpoint === 'external' && outcome.status !== 401 && outcome.status !== 403) accepted.add(p.model.name);
      rows.push(classify(p, outcome));
    }
  } finally {
    for (const m of minted) {
      try {
        await cluster.revoke(m.model, m.clientId);
      } catch (err) {
        revokeErrors.push(
          `the key ${m.clientId} minted for ${m.model.kind} ${opts.namespace}/${m.model.name} could not be revoked (${(err as Error).message}); it expires at ${m.expiresAt.toISOString()}, ` +
            `or revoke it now: nls keys revoke --model ${m.model.name} --client-id ${m.clientId} -n ${opts.namespace}`,
        );
      }
    }
  }
  return { rows, revokeErrors };
}
