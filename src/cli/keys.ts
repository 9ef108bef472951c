// `nls keys mint|list|revoke --model NAME`: manage a model's API keys. The key is printed once,
// at minting; only its client ID and metadata can be listed afterwards.
import * as k8s from '@kubernetes/client-node';
import { API_GROUP_VERSION_V1BETA1 } from '../api/common';
import { ModelKind, ModelRef } from '../translate/keys/api-keys';
import { listKeys, mintKey, revokeKey } from '../api-keys/key-store';
import { KubeRest, objectRef } from '../kube/rest';
import { parseFlags } from './flags';

export const keysUsage = `Usage:
  nls keys mint   --model NAME [--namespace NS] [--kind LLMModel|PassthroughModel] [--description TEXT] [--user NAME] [--output text|json]
  nls keys list   --model NAME [--namespace NS] [--kind ...] [--output text|json]
  nls keys revoke --model NAME --client-id ID [--namespace NS] [--kind ...]
Options:
  --kubeconfig PATH   kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster)
The API key is printed once, by mint; store it then.`;

export interface KeysOptions {
  action: 'mint' | 'list' | 'revoke';
  model: string;
  namespace?: string;
  kind?: ModelKind;
  description?: string;
  user?: string;
  clientId?: string;
  output: 'text' | 'json';
  kubeconfig?: string;
}

/** Parse `keys` arguments; errors name the flag and the fix. */
export function parseKeysArgs(args: string[]): KeysOptions {
  const [action, ...rest] = args;
  if (action !== 'mint' && action !== 'list' && action !== 'revoke') {
    throw new Error(`keys: unknown action "${action ?? ''}"; use mint, list or revoke\n${keysUsage}`);
  }
  const { values: flags, positionals } = parseFlags(`keys ${action}`, rest, {
    model: { type: 'string' },
    namespace: { type: 'string' },
    kind: { type: 'string' },
    description: { type: 'string' },
    user: { type: 'string' },
    'client-id': { type: 'string' },
    output: { type: 'string' },
    kubeconfig: { type: 'string' },
  });
  if (positionals.length > 0) throw new Error(`keys ${action}: unexpected argument "${positionals[0]}"\n${keysUsage}`);
  if (!flags.model) throw new Error(`keys ${action}: --model is required; name the LLMModel or PassthroughModel`);
  if (flags.kind && flags.kind !== 'LLMModel' && flags.kind !== 'PassthroughModel') {
    throw new Error(`keys ${action}: --kind "${flags.kind}" is not a model kind; use LLMModel or PassthroughModel`);
  }
  if (action === 'revoke' && !flags['client-id']) throw new Error('keys revoke: --client-id is required; find it with `nls keys list`');
  const output = flags.output ?? 'text';
  if (output !== 'text' && output !== 'json') throw new Error(`keys ${action}: --output "${output}" is not supported; use text or json`);
  return {
    action,
    model: flags.model,
    namespace: flags.namespace,
    kind: flags.kind as ModelKind | undefined,
    description: flags.description,
    user: flags.user,
    clientId: flags['client-id'],
    output,
    kubeconfig: flags.kubeconfig,
  };
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

/** Run `nls keys ...`; `print` receives stdout lines. Returns the exit code. */
export async function runKeys(args: string[], print: (line: string) => void = (l) => process.stdout.write(l + '\n')): Promise<number> {
  const opts = parseKeysArgs(args);
  const kc = new k8s.KubeConfig();
  if (opts.kubeconfig) kc.loadFromFile(opts.kubeconfig);
  else kc.loadFromDefault();
  const namespace = opts.namespace ?? kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default';
  const client = new KubeRest(kc);
  try {
    const model = await resolveModel(client, opts.model, namespace, opts.kind);
    if (opts.action === 'mint') {
      const user = opts.user ?? kc.getCurrentUser()?.name ?? process.env.USER ?? 'unknown';
      const minted = await mintKey(client, model, user, opts.description);
      if (opts.output === 'json') print(JSON.stringify({ model: model.name, namespace, kind: model.kind, clientId: minted.clientId, apiKey: minted.apiKey }));
      else {
        print(`Minted a key for ${model.kind} ${namespace}/${model.name}.`);
        print(`client ID: ${minted.clientId}`);
        print('API key (shown only now; store it safely):');
        print(minted.apiKey);
      }
    } else if (opts.action === 'list') {
      const records = await listKeys(client, model);
      if (opts.output === 'json') print(JSON.stringify(records));
      else if (records.length === 0) print(`${model.kind} ${namespace}/${model.name} has no API keys; mint one with \`nls keys mint --model ${model.name}\``);
      else {
        print(['CLIENT ID', 'CREATED BY', 'CREATED AT', 'DESCRIPTION'].join('\t'));
        for (const r of records) print([r.clientId, r.createdBy, r.createdAt, r.description ?? ''].join('\t'));
      }
    } else {
      const removed = await revokeKey(client, model, opts.clientId!);
      if (!removed) {
        print(`${model.kind} ${namespace}/${model.name} has no key with client ID ${opts.clientId}; see \`nls keys list --model ${model.name}\``);
        return 1;
      }
      print(`Revoked ${opts.clientId}; the gateway rejects it once the model's SecurityPolicy is updated.`);
    }
    return 0;
  } finally {
    client.close();
  }
}
