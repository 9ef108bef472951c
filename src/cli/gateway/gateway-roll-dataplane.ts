// `nls gateway roll-dataplane`: the seed's step 5. Requests a new Envoy data plane (so new pods get
// the AI Gateway's matching ext-proc sidecar) the way Envoy Gateway supports: a pod annotation in
// the Gateway's EnvoyProxy (spec.provider.kubernetes.envoyDeployment.pod.annotations), which Envoy
// Gateway copies into the pod template of the Deployment it generates. The generated Deployment is
// only read, never written. Then waits for the rollout: every pod of each data-plane Deployment
// carries the new value and is Ready, and no old pod is left.
import type { KubeObject, KubeRest } from '../../kube/rest';
import { durationMs } from '../flags';
import { GATEWAY_TARGET_USAGE, parseGatewayCommand } from './gateway-cluster';
import { ENVOY_GATEWAY_GROUP, GATEWAY_API_GROUP, type GatewayName } from './gateway-objects';
import { ExitCode, UsageError } from '../phases';
import { commandOutput } from '../output';

export const gatewayRollDataplaneUsage = `Usage:
  nls gateway roll-dataplane [--timeout 10m] [--dry-run] [--gateway NS/NAME]... [--release NAME] [--namespace NS]
Rolls the Envoy data plane of the pack's Gateways: sets the pod annotation
${'`'}llm.nebari.dev/dataplane-rollout${'`'} (a new value each run) in the Gateway's EnvoyProxy
(spec.infrastructure.parametersRef, else its GatewayClass's parametersRef), at
spec.provider.kubernetes.envoyDeployment.pod.annotations. Envoy Gateway copies it into the
data-plane Deployment it generates, whose pods then roll. Never writes that Deployment. Waits until
every data-plane pod carries the new value and is Ready and no old pod is left; exit 4 on timeout.
An EnvoyProxy of the GatewayClass is shared: every Gateway of that class rolls.
  --timeout DURATION  how long to wait for the new pods (default 10m)
  --dry-run           print the EnvoyProxy and Deployments, change nothing
${GATEWAY_TARGET_USAGE}`;

export const ROLLOUT_ANNOTATION = 'llm.nebari.dev/dataplane-rollout';
export const ROLL_FIELD_MANAGER = 'nls-gateway-roll-dataplane';

type Obj = KubeObject & { spec?: Record<string, unknown>; status?: Record<string, unknown> };
type Ref = { group?: string; kind?: string; name?: string; namespace?: string };
type Deployment = KubeObject & {
  spec: { replicas?: number; selector: { matchLabels?: Record<string, string> }; template: { metadata?: { annotations?: Record<string, string> } } };
  status?: { observedGeneration?: number; replicas?: number; updatedReplicas?: number; readyReplicas?: number; availableReplicas?: number };
};
type Pod = KubeObject & { status?: { conditions?: { type: string; status: string }[] } };

/** The data plane of one Gateway: its EnvoyProxy and the Deployments Envoy Gateway generated for it. */
export interface DataPlane {
  readonly gateway: GatewayName;
  readonly envoyProxy: { readonly namespace: string; readonly name: string; readonly from: 'Gateway' | 'GatewayClass' };
  readonly deployments: readonly { readonly namespace: string; readonly name: string }[];
}

/** Envoy Gateway's labels on the proxy Deployment of a Gateway (or of a class whose Gateways are merged). */
export function dataPlaneSelector(gateway: GatewayName, mergedClass?: string): string {
  const base = 'app.kubernetes.io/managed-by=envoy-gateway,app.kubernetes.io/component=proxy';
  return mergedClass ? `${base},gateway.envoyproxy.io/owning-gatewayclass=${mergedClass}` : `${base},gateway.envoyproxy.io/owning-gateway-name=${gateway.name},gateway.envoyproxy.io/owning-gateway-namespace=${gateway.namespace}`;
}

async function findDataPlane(rest: KubeRest, gateway: GatewayName): Promise<DataPlane & { proxy: Obj }> {
  const gw = await rest.get<Obj>({ apiVersion: `${GATEWAY_API_GROUP}/v1`, kind: 'Gateway', metadata: gateway });
  const where = `Gateway ${gateway.namespace}/${gateway.name}`;
  if (!gw) throw new Error(`${where} not found; check --gateway (or the chart values platform.*.gatewayName/gatewayNamespace)`);
  const isProxy = (r?: Ref) => r?.kind === 'EnvoyProxy' && (r.group ?? ENVOY_GATEWAY_GROUP) === ENVOY_GATEWAY_GROUP;
  const infra = (gw.spec?.infrastructure as { parametersRef?: Ref } | undefined)?.parametersRef;
  const className = gw.spec?.gatewayClassName as string;
  let proxyRef: { namespace: string; name: string; from: 'Gateway' | 'GatewayClass' } | undefined;
  if (isProxy(infra)) proxyRef = { namespace: gateway.namespace, name: infra!.name!, from: 'Gateway' };
  else {
    const cls = await rest.get<Obj>({ apiVersion: `${GATEWAY_API_GROUP}/v1`, kind: 'GatewayClass', metadata: { name: className } });
    const params = cls?.spec?.parametersRef as Ref | undefined;
    if (isProxy(params) && params!.namespace) proxyRef = { namespace: params!.namespace, name: params!.name!, from: 'GatewayClass' };
  }
  if (!proxyRef) {
    throw new Error(
      `${where} has no EnvoyProxy (neither its spec.infrastructure.parametersRef nor GatewayClass ${className}'s spec.parametersRef names one), so there is no pod template to annotate; ` +
        'create an EnvoyProxy and reference it from spec.infrastructure.parametersRef (this changes the data plane, so it is not done for you), or roll the data plane by hand',
    );
  }
  const proxy = await rest.get<Obj>({ apiVersion: `${ENVOY_GATEWAY_GROUP}/v1alpha1`, kind: 'EnvoyProxy', metadata: proxyRef });
  if (!proxy) throw new Error(`${where} names EnvoyProxy ${proxyRef.namespace}/${proxyRef.name} (from its ${proxyRef.from}), which does not exist; create it or fix the reference`);
  const provider = (proxy.spec?.provider ?? {}) as { type?: string; kubernetes?: { envoyDaemonSet?: unknown } };
  if (provider.type !== undefined && provider.type !== 'Kubernetes') throw new Error(`EnvoyProxy ${proxyRef.namespace}/${proxyRef.name}: spec.provider.type is ${provider.type}; only the Kubernetes provider runs a Deployment this command can roll`);
  if (provider.kubernetes?.envoyDaemonSet !== undefined) {
    throw new Error(`EnvoyProxy ${proxyRef.namespace}/${proxyRef.name} runs Envoy as a DaemonSet (spec.provider.kubernetes.envoyDaemonSet); set a new annotation in envoyDaemonSet.pod.annotations by hand to roll it`);
  }
  const merged = proxy.spec?.mergeGateways === true ? className : undefined;
  const list = await rest.list<Deployment>('apps/v1', 'Deployment', { labelSelector: dataPlaneSelector(gateway, merged) });
  if (list.items.length === 0) {
    throw new Error(`no data-plane Deployment of ${where} (labels ${dataPlaneSelector(gateway, merged)}); is Envoy Gateway running and the Gateway accepted?`);
  }
  return {
    gateway,
    envoyProxy: proxyRef,
    deployments: list.items.map((d) => ({ namespace: d.metadata.namespace!, name: d.metadata.name })),
    proxy,
  };
}

/** The merge patch setting the annotation; it names the provider type when the EnvoyProxy has none yet (the CRD requires it). */
export function rolloutPatch(proxy: Obj, value: string): Record<string, unknown> {
  const type = ((proxy.spec?.provider ?? {}) as { type?: string }).type ?? 'Kubernetes';
  return { spec: { provider: { type, kubernetes: { envoyDeployment: { pod: { annotations: { [ROLLOUT_ANNOTATION]: value } } } } } } };
}

/** Where one Deployment's rollout stands; `done` when every pod is new and Ready and none is old. */
export function rolloutState(d: Deployment, pods: readonly Pod[], value: string): { done: boolean; status: string } {
  const where = `Deployment ${d.metadata.namespace}/${d.metadata.name}`;
  if (d.spec.template.metadata?.annotations?.[ROLLOUT_ANNOTATION] !== value) {
    return { done: false, status: `${where}: waiting for Envoy Gateway to copy the annotation into the pod template` };
  }
  const want = d.spec.replicas ?? 1;
  const isNew = (p: Pod) => p.metadata.annotations?.[ROLLOUT_ANNOTATION] === value;
  const ready = (p: Pod) => !p.metadata.deletionTimestamp && !!p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
  const fresh = pods.filter((p) => isNew(p) && ready(p)).length;
  const old = pods.filter((p) => !isNew(p)).length;
  const observed = (d.status?.observedGeneration ?? 0) >= (d.metadata.generation ?? 0);
  const done = observed && fresh >= want && old === 0 && (d.status?.updatedReplicas ?? 0) >= want;
  return { done, status: `${where}: ${fresh}/${want} new pods ready, ${old} old pod(s) left` };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `nls gateway roll-dataplane …`; returns the exit code. */
export async function runGatewayRollDataplane(args: string[], out: (line: string) => void = commandOutput): Promise<number> {
  let parsed;
  let timeoutMs: number;
  try {
    parsed = parseGatewayCommand('gateway roll-dataplane', args, { timeout: { type: 'string' }, 'dry-run': { type: 'boolean' } });
    timeoutMs = durationMs('timeout', parsed.values.timeout ?? '10m');
  } catch (error) {
    out(`error: ${(error as Error).message}`);
    return error instanceof UsageError ? ExitCode.usage : ExitCode.error;
  }
  const { rest, values } = parsed;
  try {
    const { gateways } = await parsed.target();
    const planes = [];
    for (const g of gateways) planes.push(await findDataPlane(rest, g));
    const proxies = new Map(planes.map((p) => [`${p.envoyProxy.namespace}/${p.envoyProxy.name}`, p]));
    const deployments = [...new Map(planes.flatMap((p) => p.deployments).map((d) => [`${d.namespace}/${d.name}`, d])).values()];
    for (const p of planes) {
      out(`Gateway ${p.gateway.namespace}/${p.gateway.name}: EnvoyProxy ${p.envoyProxy.namespace}/${p.envoyProxy.name} (from its ${p.envoyProxy.from}${p.envoyProxy.from === 'GatewayClass' ? '; every Gateway of that class rolls' : ''}); Deployments ${p.deployments.map((d) => `${d.namespace}/${d.name}`).join(', ')}`);
    }
    if (values['dry-run']) {
      out(`Dry run: would set pod annotation ${ROLLOUT_ANNOTATION} in ${[...proxies.keys()].map((k) => `EnvoyProxy ${k}`).join(', ')} and wait for the Deployments above.`);
      return ExitCode.ok;
    }
    const value = new Date().toISOString();
    for (const [key, p] of proxies) {
      await rest.mergePatch(p.proxy, rolloutPatch(p.proxy, value), { fieldManager: ROLL_FIELD_MANAGER });
      out(`Requested the rollout: EnvoyProxy ${key} spec.provider.kubernetes.envoyDeployment.pod.annotations["${ROLLOUT_ANNOTATION}"] = ${value}`);
    }
    const deadline = Date.now() + timeoutMs;
    const last = new Map<string, string>();
    for (;;) {
      let allDone = true;
      for (const ref of deployments) {
        const d = await rest.get<Deployment>({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: ref });
        if (!d) throw new Error(`Deployment ${ref.namespace}/${ref.name} disappeared during the rollout; check Envoy Gateway`);
        const selector = Object.entries(d.spec.selector.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`).join(',');
        const pods = (await rest.list<Pod>('v1', 'Pod', { namespace: ref.namespace, labelSelector: selector })).items;
        const state = rolloutState(d, pods, value);
        if (last.get(d.metadata.name) !== state.status) out(`  ${state.status}`);
        last.set(d.metadata.name, state.status);
        allDone &&= state.done;
      }
      if (allDone) {
        out(`Data plane rolled: every pod of ${deployments.length} Deployment(s) is new and Ready.`);
        return ExitCode.ok;
      }
      if (Date.now() >= deadline) {
        out(`error: the data plane did not finish rolling within ${values.timeout ?? '10m'}: ${[...last.values()].join('; ')}`);
        out('The annotation stays set; Envoy Gateway and the Deployment controller keep rolling. Check the pods, then run nls gateway roll-dataplane again (a new value rolls again) or wait longer.');
        return ExitCode.phaseFailed;
      }
      await sleep(1000);
    }
  } catch (error) {
    out(`error: ${(error as Error).message}`);
    return error instanceof UsageError ? ExitCode.usage : ExitCode.error;
  } finally {
    rest.close();
  }
}
