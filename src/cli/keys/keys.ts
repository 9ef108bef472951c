// `nls keys mint|list|revoke --model NAME` and `nls keys audit`: manage a model's API keys and read
// the key audit log. The key is printed once, at minting; only its client ID and metadata can be
// listed afterwards. Minting obeys the per-user limits of the namespace's portal unless
// --over-limit says otherwise.
import { API_GROUP_VERSION_V1BETA1 } from '../../api/common';
import { ModelKind, ModelRef } from '../../translate/keys/api-keys';
import { ApiKeyRecord } from '../../translate/keys/api-keys';
import { AuditEntry } from '../../translate/keys/audit';
import { listKeys, mintKey, revokeKey } from '../../api-keys/key-store';
import { readAuditEntries } from '../../api-keys/audit-log';
import { DEFAULT_KEY_LIMITS, KeyLimitError, KeyLimits, keyLimitsFromEnv } from '../../translate/keys/limits';
import { KubeApiError, KubeObject, KubeRest, objectRef } from '../../kube/rest';
import { kubeConfigFrom } from '../kubeconfig';
import { durationMs, parseFlags } from '../flags';
import { terminalSafe, terminalSafeJson } from '../output';

export { terminalSafe, terminalSafeJson };
import { UsageError } from '../phases';
import { commandOutput } from '../output';

export const keysUsage = `Usage:
  nls keys mint   --model NAME [--namespace NS] [--kind LLMModel|PassthroughModel] [--description TEXT] [--user NAME]
                  [--expires-in DURATION | --expires-at TIME] [--tier NAME] [--over-limit] [--output text|json]
  nls keys list   --model NAME [--namespace NS] [--kind ...] [--output text|json]
  nls keys revoke --model NAME --client-id ID [--namespace NS] [--kind ...]
  nls keys audit  [--model NAME] [--user NAME] [--since DURATION] [--namespace NS] [--output text|json]
Options:
  --expires-in DURATION  the key expires this long after minting (e.g. 30d, 12h); the operator then removes it
  --expires-at TIME      the key expires at this ISO 8601 time (e.g. 2030-01-31T00:00:00Z)
  --tier NAME            quota tier recorded on the key (the tier's groups are not checked: the CLI does not know the owner's groups)
  --over-limit           mint even when the owner is at a per-user limit (keys per model, mints per hour); recorded in the audit log
  --user NAME            mint: the key's owner (default: the kubeconfig user); audit: only entries of this owner or actor
  --since DURATION       audit: only entries of the last DURATION (e.g. 7d)
  -n, --namespace NS     the model's namespace (default: the context's namespace, else default)
  -o, --output text|json
  --kubeconfig PATH      kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster)
  --context NAME         kubeconfig context (default: its current context)
The API key is printed once, by mint; store it then. Keys minted without an expiry never expire.`;

export interface KeysOptions {
  action: 'mint' | 'list' | 'revoke' | 'audit';
  /** Required except for audit, where it filters. */
  model?: string;
  namespace?: string;
  kind?: ModelKind;
  description?: string;
  user?: string;
  clientId?: string;
  /** mint: expiry relative to the time of minting. */
  expiresInMs?: number;
  /** mint: absolute expiry. */
  expiresAt?: Date;
  tier?: string;
  /** mint: skip the per-user limits (an administrator's explicit decision, recorded in the audit entry). */
  overLimit?: boolean;
  /** audit: how far back. */
  sinceMs?: number;
  output: 'text' | 'json';
  kubeconfig?: string;
  /** The kubeconfig context (default: its current context). */
  context?: string;
}

const ACTIONS = ['mint', 'list', 'revoke', 'audit'] as const;

/** Parse `keys` arguments; errors name the flag and the fix. */
export function parseKeysArgs(args: string[]): KeysOptions {
  const [action, ...rest] = args;
  if (!ACTIONS.includes(action as (typeof ACTIONS)[number])) {
    throw new UsageError(`keys: unknown action "${action ?? ''}"; use mint, list, revoke or audit\n${keysUsage}`);
  }
  const act = action as KeysOptions['action'];
  const { values: flags, positionals } = parseFlags(`keys ${action}`, rest, {
    model: { type: 'string' },
    namespace: { type: 'string' },
    kind: { type: 'string' },
    description: { type: 'string' },
    user: { type: 'string' },
    'client-id': { type: 'string' },
    'expires-in': { type: 'string' },
    'expires-at': { type: 'string' },
    tier: { type: 'string' },
    'over-limit': { type: 'boolean' },
    since: { type: 'string' },
    output: { type: 'string' },
    kubeconfig: { type: 'string' },
    context: { type: 'string' },
  });
  if (positionals.length > 0) throw new UsageError(`keys ${action}: unexpected argument "${positionals[0]}"\n${keysUsage}`);
  if (!flags.model && act !== 'audit') throw new UsageError(`keys ${action}: --model is required; name the LLMModel or PassthroughModel`);
  for (const flag of ['expires-in', 'expires-at', 'tier'] as const) {
    if (flags[flag] !== undefined && act !== 'mint') throw new UsageError(`keys ${action}: --${flag} applies only to \`nls keys mint\``);
  }
  if (flags['over-limit'] && act !== 'mint') throw new UsageError(`keys ${action}: --over-limit applies only to \`nls keys mint\``);
  if (flags.since !== undefined && act !== 'audit') throw new UsageError(`keys ${action}: --since applies only to \`nls keys audit\``);
  if (flags['expires-in'] !== undefined && flags['expires-at'] !== undefined) throw new UsageError('keys mint: give --expires-in or --expires-at, not both');
  const expiresInMs = flags['expires-in'] !== undefined ? durationMs('expires-in', flags['expires-in']) : undefined;
  if (expiresInMs !== undefined && expiresInMs <= 0) throw new UsageError(`keys mint: --expires-in "${flags['expires-in']}" must be longer than zero`);
  let expiresAt: Date | undefined;
  if (flags['expires-at'] !== undefined) {
    // ISO 8601 with a date and a time (a bare date would silently mean midnight UTC).
    if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(flags['expires-at']) || isNaN(Date.parse(flags['expires-at']))) {
      throw new UsageError(`keys mint: --expires-at "${flags['expires-at']}" is not an ISO 8601 time with a zone; write e.g. 2030-01-31T00:00:00Z`);
    }
    expiresAt = new Date(flags['expires-at']);
  }
  if (flags.tier !== undefined && !/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(flags.tier)) {
    throw new UsageError(`keys mint: --tier "${flags.tier}" is not a tier name; use lowercase letters, digits and "-" (e.g. standard)`);
  }
  if (flags.kind && flags.kind !== 'LLMModel' && flags.kind !== 'PassthroughModel') {
    throw new UsageError(`keys ${action}: --kind "${flags.kind}" is not a model kind; use LLMModel or PassthroughModel`);
  }
  if (action === 'revoke' && !flags['client-id']) throw new UsageError('keys revoke: --client-id is required; find it with `nls keys list`');
  const output = flags.output ?? 'text';
  if (output !== 'text' && output !== 'json') throw new UsageError(`keys ${action}: --output "${output}" is not supported; use text or json`);
  return {
    action: act,
    model: flags.model,
    namespace: flags.namespace,
    kind: flags.kind as ModelKind | undefined,
    description: flags.description,
    user: flags.user,
    clientId: flags['client-id'],
    ...(expiresInMs !== undefined ? { expiresInMs } : {}),
    ...(expiresAt ? { expiresAt } : {}),
    ...(flags.tier ? { tier: flags.tier } : {}),
    ...(flags['over-limit'] ? { overLimit: true } : {}),
    ...(flags.since !== undefined ? { sinceMs: durationMs('since', flags.since) } : {}),
    output,
    kubeconfig: flags.kubeconfig,
    context: flags.context,
  };
}

const tableLines = (rows: string[][]) => rows.map((cells) => cells.map(terminalSafe).join('\t'));

/** `nls keys list` as a table: one row per key, empty cells for what an old record lacks. */
export function keysTable(records: readonly ApiKeyRecord[]): string[] {
  const rows = [['CLIENT ID', 'OWNER', 'CREATED AT', 'EXPIRES AT', 'GROUPS', 'TIER', 'DESCRIPTION']];
  for (const r of records) rows.push([r.clientId, r.createdBy, r.createdAt, r.expiresAt ?? 'never', (r.groups ?? []).join(',') || '-', r.tier ?? '-', r.description ?? '']);
  return tableLines(rows);
}

/** `nls keys audit` as a table, oldest first. */
export function auditTable(entries: readonly AuditEntry[]): string[] {
  const rows = [['AT', 'ACTION', 'ACTOR', 'MODEL', 'CLIENT ID', 'OWNER', 'REASON']];
  for (const e of entries) rows.push([e.at, e.action, e.actor, `${e.model.kind}/${e.model.name}`, e.clientId, e.owner, e.reason ?? '']);
  return tableLines(rows);
}

async function resolveModel(client: KubeRest, name: string, namespace: string, kind?: ModelKind): Promise<ModelRef> {
  const kinds: ModelKind[] = kind ? [kind] : ['PassthroughModel', 'LLMModel'];
  const found: ModelKind[] = [];
  for (const k of kinds) {
    if (!(await client.isServed(API_GROUP_VERSION_V1BETA1, k))) continue;
    const obj = await client.get(objectRef(API_GROUP_VERSION_V1BETA1, k, name, namespace));
    if (obj && obj.metadata.deletionTimestamp) throw new Error(`${k} ${namespace}/${name} is being deleted; its keys go with it`);
    if (obj) found.push(k);
  }
  if (found.length === 0) throw new Error(`no ${kind ?? 'LLMModel or PassthroughModel'} named "${name}" in namespace "${namespace}"; check --model and --namespace`);
  if (found.length > 1) throw new Error(`both an LLMModel and a PassthroughModel are named "${name}" in "${namespace}"; pass --kind`);
  return { kind: found[0], name, namespace };
}

type PortalDeploymentObject = KubeObject & { spec?: { template?: { spec?: { containers?: { name: string; env?: { name: string; value?: string }[] }[] } } } };

/**
 * The per-user limits `nls keys mint` enforces: those the namespace's key portal runs with (its
 * Deployment's environment, which the chart fills from `portal.keyLimits`), so both mint paths
 * count alike; the chart's defaults when no portal runs there or Deployments may not be read.
 */
export async function keyLimitsInNamespace(client: KubeRest, namespace: string): Promise<KeyLimits> {
  let deployments: PortalDeploymentObject[];
  try {
    deployments = (await client.list<PortalDeploymentObject>('apps/v1', 'Deployment', { namespace, labelSelector: 'app.kubernetes.io/part-of=nebari-llm-serving,app.kubernetes.io/component=portal' })).items;
  } catch (err) {
    // Forbidden, or no apps/v1 served: no portal to agree with.
    if (err instanceof KubeApiError && (err.code === 403 || err.code === 404)) return DEFAULT_KEY_LIMITS;
    throw err;
  }
  const container = deployments.flatMap((d) => d.spec?.template?.spec?.containers ?? []).find((c) => c.name === 'portal');
  if (!container) return DEFAULT_KEY_LIMITS;
  return keyLimitsFromEnv(Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value])));
}

/** Run `nls keys ...`; `print` receives stdout lines. Returns the exit code. */
export async function runKeys(args: string[], print: (line: string) => void = commandOutput): Promise<number> {
  const opts = parseKeysArgs(args);
  const kc = kubeConfigFrom(opts.kubeconfig, opts.context);
  const namespace = opts.namespace ?? kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default';
  const client = new KubeRest(kc);
  const kubeUser = kc.getCurrentUser()?.name ?? process.env.USER ?? 'unknown';
  if (opts.expiresAt && opts.expiresAt.getTime() <= Date.now()) throw new UsageError(`keys mint: --expires-at ${opts.expiresAt.toISOString()} is in the past; give a future time`);
  try {
    if (opts.action === 'audit') {
      const since = opts.sinceMs !== undefined ? new Date(Date.now() - opts.sinceMs) : undefined;
      const entries = await readAuditEntries(client, namespace, { model: opts.model, user: opts.user, since });
      if (opts.output === 'json') print(terminalSafeJson(entries));
      else if (entries.length === 0) print(`no key audit entries in namespace ${namespace} match`);
      else for (const line of auditTable(entries)) print(line);
      return 0;
    }
    const model = await resolveModel(client, opts.model!, namespace, opts.kind);
    if (opts.action === 'mint') {
      const user = opts.user ?? kubeUser;
      const expiresAt = opts.expiresAt ?? (opts.expiresInMs !== undefined ? new Date(Date.now() + opts.expiresInMs) : undefined);
      // Limits as in the portal unless the administrator says otherwise, which the audit log records.
      const limitOpts = opts.overLimit ? { reason: 'minted with nls keys mint --over-limit: per-user limits not checked' } : { limits: await keyLimitsInNamespace(client, namespace) };
      const minted = await mintKey(client, model, user, opts.description, { grantedBy: 'admin', source: 'cli', actor: kubeUser, expiresAt, tier: opts.tier, ...limitOpts }).catch((err: unknown) => {
        if (err instanceof KeyLimitError) throw new Error(`${err.message}; as an administrator, pass --over-limit to mint anyway`);
        throw err;
      });
      if (opts.output === 'json') print(terminalSafeJson({ model: model.name, namespace, kind: model.kind, clientId: minted.clientId, apiKey: minted.apiKey, ...(expiresAt ? { expiresAt: expiresAt.toISOString() } : {}) }));
      else {
        print(`Minted a key for ${model.kind} ${namespace}/${model.name}${expiresAt ? `, expiring at ${expiresAt.toISOString()}` : ''}.`);
        print(`client ID: ${terminalSafe(minted.clientId)}`);
        print('API key (shown only now; store it safely):');
        print(minted.apiKey);
      }
    } else if (opts.action === 'list') {
      const records = await listKeys(client, model);
      if (opts.output === 'json') print(terminalSafeJson(records));
      else if (records.length === 0) print(`${model.kind} ${namespace}/${model.name} has no API keys; mint one with \`nls keys mint --model ${model.name}\``);
      else for (const line of keysTable(records)) print(line);
    } else {
      const removed = await revokeKey(client, model, opts.clientId!, { actor: kubeUser, reason: 'revoked with nls keys revoke' });
      if (!removed) {
        print(`${model.kind} ${namespace}/${model.name} has no key with client ID ${terminalSafe(opts.clientId!)}; see \`nls keys list --model ${model.name}\``);
        return 1;
      }
      print(`Revoked ${terminalSafe(opts.clientId!)}; the gateway rejects it once the model's SecurityPolicy is updated.`);
    }
    return 0;
  } finally {
    client.close();
  }
}
