// The pure half of `nls smoke` (./smoke): which requests to send for the stored models, what a
// response means (a table row with the likely fix), the table itself, and the curl-like flags.
// No I/O here, so every decision is unit-tested without a gateway.
import type { LLMModelV1beta1, PassthroughModelV1beta1 } from '../../api/v1beta1';
import { enabledEndpoints, type EndpointName } from '../../translate/gateway';
import { gatewayContextFromEnv, resolveGatewayContext, type ResolvedEndpoint } from '../../translate/gateway/context';
import type { ModelKind } from '../../translate/keys/api-keys';
import { UsageError } from '../phases';
import { terminalSafe } from '../keys/keys';

/** What the checks need of one stored LLMModel or PassthroughModel. */
export interface SmokeModel {
  readonly kind: ModelKind;
  readonly name: string;
  /** The names clients put in `model`: spec.model.name, or each of spec.models.declared. */
  readonly modelIds: readonly string[];
  /** The endpoints the model is published on (the translation's own rule). */
  readonly endpoints: readonly EndpointName[];
  /** The request that asks the model for an answer: the API its provider speaks through the gateway. */
  readonly answerCheck: AnswerCheck;
  /** Why the gateway does not serve the model yet (its Programmed condition, when not True). */
  readonly notProgrammed?: string;
}

export function smokeModel(obj: LLMModelV1beta1 | PassthroughModelV1beta1): SmokeModel {
  const modelIds = obj.kind === 'LLMModel' ? [obj.spec.model.name] : (obj.spec.models?.declared ?? []);
  // AI Gateway 1.1.0 has no OpenAI chat translation for an Anthropic backend: Anthropic models
  // answer Anthropic's Messages API under /anthropic (docs/compatibility-gateway.md).
  const anthropic = obj.kind === 'PassthroughModel' && obj.spec.provider.backend?.type === 'Anthropic';
  const programmed = (obj.status?.conditions ?? []).find((c) => c.type === 'Programmed');
  const notProgrammed = programmed && programmed.status !== 'True' ? `Programmed=${programmed.status} (${programmed.reason}): ${programmed.message}` : undefined;
  return {
    kind: obj.kind,
    name: obj.metadata.name ?? '',
    modelIds,
    endpoints: enabledEndpoints(obj.spec.endpoints),
    answerCheck: anthropic ? 'POST /anthropic/v1/messages' : 'POST /v1/chat/completions',
    ...(notProgrammed ? { notProgrammed } : {}),
  };
}

/**
 * The endpoints as the operator resolves them from its environment (`env`: the operator
 * container's variables; `where` names the Deployment in errors): the operator's own parsing and
 * defaults, so the host names are the ones its routes declare.
 */
export function operatorEndpoints(env: Readonly<Record<string, string>>, where: string): Record<EndpointName, ResolvedEndpoint> {
  let resolved;
  try {
    resolved = resolveGatewayContext(gatewayContextFromEnv(env));
  } catch (err) {
    throw new Error(`${where}: ${(err as Error).message}`);
  }
  if (resolved.errors.length > 0) throw new Error(`${where}: ${resolved.errors.map((e) => `${e.field}: ${e.message}`).join('; ')}`);
  return { ...resolved.context.endpoints };
}

/** Where clients call an endpoint: its host name (as the operator derives it) and port. */
export interface EndpointTarget {
  readonly hostname: string;
  readonly port: number;
}

export type AnswerCheck = 'POST /v1/chat/completions' | 'POST /anthropic/v1/messages';
export type CheckName = 'GET /v1/models' | AnswerCheck;

export interface PlannedCheck {
  readonly model: SmokeModel;
  /** Empty for a catch-all PassthroughModel that declares no name (then `skip` says so). */
  readonly modelId: string;
  readonly endpoint: EndpointName;
  readonly target: EndpointTarget;
  readonly check: CheckName;
  /** Why the check is not sent; a skipped check is not a failure. */
  readonly skip?: string;
}

/**
 * Every check for `models`: per model, enabled endpoint and model name, `GET /v1/models` then a
 * one-token answer (a chat completion, or an Anthropic message). `only` (the --model flags) keeps models by object name or model name.
 */
export function planChecks(models: readonly SmokeModel[], targets: Readonly<Record<EndpointName, EndpointTarget>>, opts: { only?: readonly string[]; hasToken: boolean }): PlannedCheck[] {
  const only = opts.only ?? [];
  const planned: PlannedCheck[] = [];
  for (const model of models) {
    const byObject = only.length === 0 || only.includes(model.name);
    const ids = byObject ? model.modelIds : model.modelIds.filter((id) => only.includes(id));
    if (!byObject && ids.length === 0) continue;
    for (const endpoint of model.endpoints) {
      const skip = endpoint === 'internal' && !opts.hasToken ? 'skipped: no --token' : undefined;
      for (const modelId of ids.length > 0 ? ids : ['']) {
        const why = modelId === '' ? 'skipped: no declared model name (catch-all only); nothing to ask for' : skip;
        for (const check of ['GET /v1/models', model.answerCheck] as const) planned.push({ model, modelId, endpoint, target: targets[endpoint], check, ...(why ? { skip: why } : {}) });
      }
    }
  }
  return planned;
}

/** The --model names that match no stored model (a typo would otherwise check nothing and pass). */
export function unmatchedModelFlags(models: readonly SmokeModel[], only: readonly string[]): string[] {
  return only.filter((n) => !models.some((m) => m.name === n || m.modelIds.includes(n)));
}

/** The request body of the answer check: one token, so a real model answers fast and cheaply. */
export function answerBody(modelId: string): string {
  // The same body is valid for OpenAI chat completions and Anthropic messages.
  return JSON.stringify({ model: modelId, messages: [{ role: 'user', content: 'ping' }], max_tokens: 1 });
}

/** What came back from one request: a status and body, or the error that prevented one. */
export interface Outcome {
  readonly status?: number;
  readonly body?: string;
  /** Node's error code (ECONNREFUSED, ETIMEDOUT, DEPTH_ZERO_SELF_SIGNED_CERT, …) and message. */
  readonly error?: { readonly code?: string; readonly message: string };
  readonly latencyMs: number;
}

export type SmokeResult = 'pass' | 'fail' | 'skip';

/** One line of the report (and one element of `-o json`). */
export interface SmokeRow {
  readonly model: string;
  readonly kind: ModelKind;
  readonly modelId: string;
  readonly endpoint: EndpointName;
  readonly host: string;
  readonly check: CheckName;
  readonly result: SmokeResult;
  /** The HTTP status, or the connection error's code. */
  readonly status: string;
  readonly latencyMs?: number;
  /** What happened (for a failure: what failed). */
  readonly detail: string;
  /** For a failure: the likely cause and what to do. */
  readonly fix?: string;
}

const TLS_TRUST_CODES = new Set(['DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'UNABLE_TO_GET_ISSUER_CERT', 'CERT_UNTRUSTED']);

function rowOf(planned: PlannedCheck, result: SmokeResult, status: string, detail: string, latencyMs?: number, fixed?: string): SmokeRow {
  // A failure of a model the gateway does not serve yet: that is the likelier cause.
  const notServed = result === 'fail' && planned.model.notProgrammed;
  const fix = notServed ? `the gateway does not serve the model yet, ${planned.model.notProgrammed}; wait for it (kubectl wait --for=condition=Programmed) and run again${fixed ? `; else: ${fixed}` : ''}` : fixed;
  return {
    model: planned.model.name,
    kind: planned.model.kind,
    modelId: planned.modelId,
    endpoint: planned.endpoint,
    host: planned.target.hostname,
    check: planned.check,
    result,
    status,
    ...(latencyMs !== undefined ? { latencyMs } : {}),
    detail,
    ...(fix ? { fix } : {}),
  };
}

/** A skipped check as a row. */
export function skippedRow(planned: PlannedCheck, reason = planned.skip ?? 'skipped'): SmokeRow {
  return rowOf(planned, 'skip', '-', reason);
}

/** A check that could not be sent (e.g. no key could be minted) as a failed row. */
export function notSentRow(planned: PlannedCheck, what: string, fix: string): SmokeRow {
  return rowOf(planned, 'fail', '-', what, undefined, fix);
}

/** The likely cause of a connection error, and what to do. */
function connectionFix(code: string | undefined, p: PlannedCheck): string {
  const { hostname, port } = p.target;
  const resolve = `--resolve ${hostname}:${port}:<gateway address>`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `${hostname} does not resolve here: pass ${resolve}`;
  if (code === 'ETIMEDOUT') return `no answer within --timeout: check the gateway address (${resolve}); a model that is still loading may need a longer --timeout`;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return `the gateway's certificate does not name ${hostname}: check the certificateRefs of the Gateway listener for this endpoint`;
  if (code === 'CERT_HAS_EXPIRED') return "the gateway's certificate has expired: renew the listener's certificate";
  if (code && TLS_TRUST_CODES.has(code)) return "the gateway's certificate is not trusted here: pass --cacert <the CA that issued the gateway's certificate>";
  if (code === 'EPROTO' || code?.startsWith('ERR_SSL') || code?.startsWith('ERR_TLS')) return `TLS handshake failed: is port ${port} the Gateway's HTTPS listener (${resolve}), and does it serve ${hostname}?`;
  return `the gateway is not reachable at ${hostname}:${port}: check the address (${resolve}) and that the Gateway's proxy Service and pods are up`;
}

/** The likely cause of an HTTP status, and what to do. */
function statusFix(status: number, body: string, p: PlannedCheck): string {
  const external = p.endpoint === 'external';
  if (status === 401) {
    return external
      ? "key not accepted: is the model's key Secret listed in the endpoint's SecurityPolicy (nls verify), or is the key revoked or expired (nls keys list)?"
      : 'token not accepted: is it expired, or from another issuer or audience than platform.jwt.issuer / platform.jwt.audiences?';
  }
  if (status === 403) {
    return external
      ? "client not authorized for this model: the key's client ID is not allowed by the model's SecurityPolicy (a key of another model, or the operator has not caught up)"
      : "client not authorized for this model: the token's groups include none of the model's spec.access.groups";
  }
  if (status === 404) return `no route for the model name "${p.modelId}" on ${p.target.hostname}: check the model's AIGatewayRoute is accepted (nls verify) and the model name`;
  if (status === 429) return "rate limited: the key's quota tier is used up (docs/key-quotas.md), or the upstream provider's limit";
  if (status >= 500 || /ext_?proc/i.test(body)) {
    return 'data plane not ready: the upstream or the AI Gateway ext_proc failed (proxy pods rolling, model pods not ready, provider down); wait and run again, check the model\'s status and pods';
  }
  return `unexpected HTTP ${status}`;
}

const excerpt = (body: string) => {
  const flat = body.replace(/\s+/g, ' ').trim();
  return flat.length > 160 ? `${flat.slice(0, 160)}…` : flat;
};

/** Parses a JSON body, or undefined. */
function json(body: string | undefined): unknown {
  try {
    return JSON.parse(body ?? '');
  } catch {
    return undefined;
  }
}

/** What one response means for `planned`: pass, or a failure with what failed and the likely fix. */
export function classify(planned: PlannedCheck, outcome: Outcome): SmokeRow {
  const ms = outcome.latencyMs;
  if (outcome.error || outcome.status === undefined) {
    const code = outcome.error?.code;
    return rowOf(planned, 'fail', code ?? 'error', outcome.error?.message ?? 'no response', ms, connectionFix(code, planned));
  }
  const status = outcome.status;
  const body = outcome.body ?? '';
  if (status !== 200) return rowOf(planned, 'fail', String(status), `HTTP ${status}${body ? `: ${excerpt(body)}` : ''}`, ms, statusFix(status, body, planned));
  const parsed = json(body) as { data?: { id?: unknown }[]; choices?: unknown; content?: unknown } | undefined;
  if (planned.check === 'GET /v1/models') {
    const ids = Array.isArray(parsed?.data) ? parsed.data.map((d) => d?.id).filter((id): id is string => typeof id === 'string') : undefined;
    if (!ids) return rowOf(planned, 'fail', '200', `not a model list: ${excerpt(body)}`, ms, 'the answer is not the gateway\'s /v1/models catalog: is the address (--resolve) the AI Gateway?');
    if (!ids.includes(planned.modelId)) {
      return rowOf(planned, 'fail', '200', `"${planned.modelId}" not listed (${ids.length} models listed)`, ms, `the catalog of ${planned.target.hostname} does not list the model: its AIGatewayRoute is not accepted yet, or the model name differs (nls verify)`);
    }
    return rowOf(planned, 'pass', '200', `listed among ${ids.length} model(s)`, ms);
  }
  if (planned.check === 'POST /anthropic/v1/messages') {
    if (!parsed || !Array.isArray(parsed.content)) {
      return rowOf(planned, 'fail', '200', `no content in the answer: ${excerpt(body)}`, ms, 'the upstream did not answer in the Anthropic Messages format: check the provider (spec.provider)');
    }
    return rowOf(planned, 'pass', '200', `${parsed.content.length} content block(s)`, ms);
  }
  if (!parsed || !Array.isArray(parsed.choices)) {
    return rowOf(planned, 'fail', '200', `no choices in the answer: ${excerpt(body)}`, ms, 'the upstream did not answer in the OpenAI chat format: check the provider (spec.provider) or the serving pods');
  }
  return rowOf(planned, 'pass', '200', `${parsed.choices.length} choice(s)`, ms);
}

/** The report as a table, columns padded; a failure's DETAIL names what failed and the fix. */
export function smokeTable(rows: readonly SmokeRow[]): string[] {
  const header = ['MODEL', 'MODEL NAME', 'ENDPOINT', 'CHECK', 'RESULT', 'STATUS', 'MS', 'DETAIL'];
  const cells = rows.map((r) => [r.model, r.modelId || '-', r.endpoint, r.check, r.result.toUpperCase(), r.status, r.latencyMs === undefined ? '-' : String(r.latencyMs), r.fix ? `${r.detail}; fix: ${r.fix}` : r.detail].map(terminalSafe));
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c: string[]) => c.map((cell, i) => (i === c.length - 1 ? cell : cell.padEnd(widths[i]))).join('  ');
  return [line(header), ...cells.map(line)];
}

/** One line after the table. */
export function smokeSummary(rows: readonly SmokeRow[]): string {
  const count = (r: SmokeResult) => rows.filter((x) => x.result === r).length;
  return `${rows.length} checks: ${count('pass')} passed, ${count('fail')} failed, ${count('skip')} skipped`;
}

/** One `--resolve HOST:PORT:ADDRESS`, as curl takes it. */
export interface ResolveEntry {
  readonly host: string;
  readonly port: number;
  /** An IP address (IPv6 without brackets) or a name. */
  readonly address: string;
}

export function parseResolve(text: string): ResolveEntry {
  const m = /^([^:\s]+):(\d{1,5}):(\[[0-9a-fA-F:.]+\]|[^:\s[\]]+)$/.exec(text);
  const port = m ? Number(m[2]) : 0;
  if (!m || port < 1 || port > 65535) throw new UsageError(`smoke: --resolve "${text}" is not HOST:PORT:ADDRESS; write e.g. --resolve llm.example.com:443:203.0.113.10`);
  return { host: m[1].toLowerCase().replace(/\.$/, ''), port, address: m[3].replace(/^\[|\]$/g, '') };
}

/** The address to connect to for `host:port`: a matching --resolve entry, else the host itself. */
export function addressFor(entries: readonly ResolveEntry[], host: string, port: number): string {
  return entries.find((e) => e.host === host && e.port === port)?.address ?? host;
}

/** `--key MODEL=KEY` as a map from model object name to key. */
export function parseKeyFlags(texts: readonly string[]): Map<string, string> {
  const keys = new Map<string, string>();
  for (const text of texts) {
    const i = text.indexOf('=');
    const model = i > 0 ? text.slice(0, i) : '';
    if (!model || i === text.length - 1) throw new UsageError('smoke: --key takes MODEL=KEY (the model object\'s name and one of its API keys), e.g. --key gpt-4o=sk-…');
    if (keys.has(model)) throw new UsageError(`smoke: --key given twice for ${model}; give one key per model`);
    keys.set(model, text.slice(i + 1));
  }
  return keys;
}

type Listener = { name?: string; port?: number; protocol?: string };

/**
 * The port clients call an endpoint on: the port of the Gateway listener its routes attach to
 * (`sectionName`; an empty one attaches to every listener, so the first HTTPS one), else 443 —
 * the operator publishes `https://<host>/v1`.
 */
export function listenerPort(gateway: { spec?: { listeners?: Listener[] } } | undefined, sectionName: string): number {
  const listeners = gateway?.spec?.listeners ?? [];
  const listener = sectionName ? listeners.find((l) => l.name === sectionName) : listeners.find((l) => l.protocol === 'HTTPS');
  return typeof listener?.port === 'number' ? listener.port : 443;
}
