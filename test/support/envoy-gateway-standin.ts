// TEST STAND-IN for one behaviour of the Envoy Gateway controller, which cannot run here (its
// Envoy proxy cannot be built on this machine): when the pod annotations of a Gateway's EnvoyProxy
// (spec.provider.kubernetes.envoyDeployment.pod.annotations) change, Envoy Gateway regenerates
// the Gateway's data-plane Deployment with those annotations in its pod template. This loop does
// only that, for Deployments carrying Envoy Gateway's proxy labels; the real kube-controller-manager
// then rolls the pods and kwok runs them. Nothing else of Envoy Gateway is imitated.
import { KubeRest, type KubeObject } from '../../src/kube/rest';

export const STANDIN_FIELD_MANAGER = 'envoy-gateway-standin';

type Obj = KubeObject & { spec?: Record<string, unknown> };
type Ref = { kind?: string; name?: string; namespace?: string };

async function desiredAnnotations(rest: KubeRest, gatewayNamespace: string, gatewayName: string): Promise<Record<string, string> | undefined> {
  const gw = await rest.get<Obj>({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name: gatewayName, namespace: gatewayNamespace } });
  if (!gw) return undefined;
  let ref = (gw.spec?.infrastructure as { parametersRef?: Ref } | undefined)?.parametersRef;
  let namespace = gatewayNamespace;
  if (ref?.kind !== 'EnvoyProxy') {
    const cls = await rest.get<Obj>({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: gw.spec?.gatewayClassName as string } });
    ref = cls?.spec?.parametersRef as Ref | undefined;
    namespace = ref?.namespace ?? namespace;
  }
  if (ref?.kind !== 'EnvoyProxy' || !ref.name) return undefined;
  const proxy = await rest.get<Obj>({ apiVersion: 'gateway.envoyproxy.io/v1alpha1', kind: 'EnvoyProxy', metadata: { name: ref.name, namespace } });
  const provider = proxy?.spec?.provider as { kubernetes?: { envoyDeployment?: { pod?: { annotations?: Record<string, string> } } } } | undefined;
  return provider?.kubernetes?.envoyDeployment?.pod?.annotations ?? {};
}

/** Starts the loop; `stop()` ends it. */
export function startEnvoyGatewayStandIn(rest: KubeRest, intervalMs = 250): { stop(): Promise<void> } {
  let stopped = false;
  let failure: unknown;
  const loop = (async () => {
    while (!stopped) {
      const deployments = await rest.list<Obj>('apps/v1', 'Deployment', { labelSelector: 'app.kubernetes.io/managed-by=envoy-gateway,app.kubernetes.io/component=proxy' });
      for (const d of deployments.items) {
        const labels = d.metadata.labels ?? {};
        const want = await desiredAnnotations(rest, labels['gateway.envoyproxy.io/owning-gateway-namespace'], labels['gateway.envoyproxy.io/owning-gateway-name']);
        const have = ((d.spec?.template as { metadata?: { annotations?: Record<string, string> } }).metadata?.annotations ?? {}) as Record<string, string>;
        if (want && Object.entries(want).some(([k, v]) => have[k] !== v)) {
          await rest.mergePatch(d, { spec: { template: { metadata: { annotations: want } } } }, { fieldManager: STANDIN_FIELD_MANAGER });
        }
      }
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })().catch((err: unknown) => {
    failure = err;
  });
  return {
    /** Ends the loop; throws what stopped it early, if anything did. */
    async stop() {
      stopped = true;
      await loop;
      if (failure) throw failure;
    },
  };
}
