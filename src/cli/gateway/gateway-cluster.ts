// Reading what `nls gateway …` works on: which Gateways the pack attaches to (from the operator
// Deployment's NLS_GATEWAY_CONTEXT, the same settings the operator uses, or `--gateway NS/NAME`),
// the CRDs of the gateway kinds (storage version, storedVersions) and every object of those kinds.
import { KubeRest, type KubeObject, isNotFound } from '../../kube/rest';
import { type GatewayContext, resolveGatewayContext } from '../../translate/gateway/context';
import { kubeConfigFrom } from '../lifecycle/crds';
import { parseFlags, type FlagOptions, type ParsedFlags } from '../flags';
import { INVENTORY_KINDS, type GatewayName, type InventoryKind, type KindStorage } from './gateway-objects';
import { CHART_NAME } from '../lifecycle/guarded-phases';
import { UsageError } from '../phases';

/** Flags every `nls gateway` subcommand takes. */
export const GATEWAY_TARGET_FLAGS = {
  release: { type: 'string' },
  namespace: { type: 'string' },
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  gateway: { type: 'string', multiple: true },
} as const satisfies FlagOptions;

export const GATEWAY_TARGET_USAGE = `  --gateway NS/NAME   a Gateway to work on (repeatable); default: the Gateways the release's operator
                      attaches model routes to (platform.external/internal.gatewayName in the chart values)
  --release NAME      release of the pack (default ${CHART_NAME})
  --namespace NS      its namespace (default ${CHART_NAME}-system)
  --kubeconfig PATH, --context NAME   which cluster`;

/** `NS/NAME` of `--gateway`. */
export function parseGatewayFlag(text: string): GatewayName {
  const m = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-a-z0-9.]*[a-z0-9])?)$/.exec(text);
  if (!m) throw new UsageError(`--gateway "${text}" is not NAMESPACE/NAME; write e.g. --gateway envoy-gateway-system/nebari-gateway`);
  return { namespace: m[1], name: m[3] };
}

/** The Gateways of a gateway context: external and internal endpoints, each once. */
export function gatewaysOfContext(context: Partial<GatewayContext>): GatewayName[] {
  // Only names and namespaces are needed; a missing base domain must not hide them.
  const { endpoints } = resolveGatewayContext({ ...context, baseDomain: context.baseDomain || 'example.com' }).context;
  const all = [endpoints.external, endpoints.internal].map((e) => ({ namespace: e.gatewayNamespace, name: e.gatewayName }));
  return all.filter((g, i) => all.findIndex((o) => o.namespace === g.namespace && o.name === g.name) === i);
}

type OperatorDeployment = KubeObject & { spec: { template: { spec: { containers: { name: string; env?: { name: string; value?: string }[] }[] } } } };

/** The Gateways the release's operator attaches to, from its NLS_GATEWAY_CONTEXT. */
export async function packGateways(rest: KubeRest, release: string, namespace: string): Promise<GatewayName[]> {
  const list = await rest.list<OperatorDeployment>('apps/v1', 'Deployment', {
    namespace,
    labelSelector: `app.kubernetes.io/instance=${release},app.kubernetes.io/component=operator`,
  });
  if (list.items.length !== 1) {
    throw new UsageError(
      `found ${list.items.length} operator Deployments of release ${release} in ${namespace}, so the pack's Gateways are unknown; ` +
        'check --release and --namespace, or name the Gateways with --gateway NS/NAME',
    );
  }
  const deployment = list.items[0];
  const containers = deployment.spec.template.spec.containers;
  const container = containers.find((c) => c.name === 'operator') ?? containers[0];
  const raw = container?.env?.find((e) => e.name === 'NLS_GATEWAY_CONTEXT')?.value;
  let context: Partial<GatewayContext> = {};
  if (raw) {
    try {
      context = JSON.parse(raw) as Partial<GatewayContext>;
    } catch (err) {
      throw new Error(`Deployment ${namespace}/${deployment.metadata.name}: NLS_GATEWAY_CONTEXT is not valid JSON (${(err as Error).message}); name the Gateways with --gateway NS/NAME`);
    }
  }
  return gatewaysOfContext(context);
}

export interface GatewayTarget {
  readonly rest: KubeRest;
  readonly gateways: readonly GatewayName[];
}

/** Parses the shared flags plus the subcommand's own; resolves the Gateways (may contact the cluster). */
export function parseGatewayCommand<const O extends FlagOptions>(
  command: string,
  args: readonly string[],
  options: O,
): { values: ParsedFlags<typeof GATEWAY_TARGET_FLAGS & O>['values']; rest: KubeRest; target: () => Promise<GatewayTarget> } {
  const flags = parseFlags(command, args, { ...GATEWAY_TARGET_FLAGS, ...options });
  if (flags.positionals.length > 0) throw new UsageError(`${command}: unexpected argument "${flags.positionals[0]}"; see \`nls ${command} --help\``);
  const values = flags.values as Record<string, unknown>;
  const explicit = ((values.gateway as string[] | undefined) ?? []).map(parseGatewayFlag);
  const release = (values.release as string | undefined) ?? CHART_NAME;
  const namespace = (values.namespace as string | undefined) ?? `${CHART_NAME}-system`;
  const rest = new KubeRest(kubeConfigFrom(values.kubeconfig as string | undefined, values.context as string | undefined));
  const target = async (): Promise<GatewayTarget> => ({ rest, gateways: explicit.length > 0 ? explicit : await packGateways(rest, release, namespace) });
  return { values: flags.values as ParsedFlags<typeof GATEWAY_TARGET_FLAGS & O>['values'], rest, target };
}

type CrdObject = KubeObject & {
  spec: { group: string; versions: { name: string; served: boolean; storage: boolean }[] };
  status?: { storedVersions?: string[] };
};

/** What the API server says about one kind's CRD. */
export async function kindStorage(rest: KubeRest, kind: InventoryKind): Promise<KindStorage> {
  const crd = `${kind.plural}.${kind.group}`;
  const obj = await rest.get<CrdObject>({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: crd } });
  if (!obj) return { kind: kind.kind, crd, installed: false, servedVersions: [], storedVersions: [] };
  return {
    kind: kind.kind,
    crd,
    installed: true,
    storageVersion: obj.spec.versions.find((v) => v.storage)?.name,
    servedVersions: obj.spec.versions.filter((v) => v.served).map((v) => v.name),
    storedVersions: obj.status?.storedVersions ?? [],
  };
}

/** The apiVersion objects of a kind are read and written in: its storage version (so a write never converts). */
export function apiVersionOf(kind: InventoryKind, storage: KindStorage): string | undefined {
  const version = storage.storageVersion && storage.servedVersions.includes(storage.storageVersion) ? storage.storageVersion : storage.servedVersions[0];
  return version ? `${kind.group}/${version}` : undefined;
}

/** CRD facts and every object of every installed gateway kind. */
export async function readGatewayObjects(rest: KubeRest): Promise<{ storage: KindStorage[]; objects: KubeObject[] }> {
  const storage: KindStorage[] = [];
  const objects: KubeObject[] = [];
  for (const kind of INVENTORY_KINDS) {
    const info = await kindStorage(rest, kind);
    storage.push(info);
    const apiVersion = apiVersionOf(kind, info);
    if (!apiVersion) continue;
    try {
      objects.push(...(await rest.list(apiVersion, kind.kind)).items);
    } catch (err) {
      // A CRD being installed or removed right now: its kind is not in discovery yet.
      if (!isNotFound(err)) throw err;
    }
  }
  return { storage, objects };
}
