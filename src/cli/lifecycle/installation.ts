// Where an installation's parts are: found from the operator Deployment of a release (its labels
// and the environment contract the chart fills in), so the commands never re-derive the chart's
// naming rules (fullname, overrides) and work the same for Helm, Argo CD and plain manifests.
import type { KubeObject, KubeRest } from '../../kube/rest';

export interface Installation {
  readonly release: string;
  readonly namespace: string;
  /** The operator Deployment (`<fullname>-operator`). */
  readonly deployment: string;
  /** `NLS_WEBHOOK_SERVICE`. */
  readonly webhookService: string;
  /** `NLS_WEBHOOK_SECRET`: holds the serving CA as `ca.crt`. */
  readonly webhookSecret: string;
  /** Our validating and mutating configurations (`NLS_VALIDATING_/NLS_MUTATING_WEBHOOK_CONFIGURATIONS`). */
  readonly webhookConfigurations: readonly string[];
  /** The upgrade guard's MutatingWebhookConfiguration (`<fullname>-agentdeployment-guard`). */
  readonly guard: string;
  /** `NLS_WATCH_NAMESPACES`: further namespaces whose AgentDeployments are admitted and reconciled. */
  readonly watchNamespaces: readonly string[];
}

type DeploymentObject = KubeObject & {
  metadata: { name: string; namespace: string; labels?: Record<string, string> };
  spec: { template: { spec: { containers: { name: string; env?: { name: string; value?: string }[] }[] } } };
};

const split = (value: string) => value.split(',').map((s) => s.trim()).filter(Boolean);

/** Names of an installation from its operator Deployment. */
export function installationFromDeployment(deployment: DeploymentObject): Installation {
  const { name, namespace, labels } = deployment.metadata;
  const container = deployment.spec.template.spec.containers.find((c) => c.name === 'operator') ?? deployment.spec.template.spec.containers[0];
  const env = new Map((container?.env ?? []).map((e) => [e.name, e.value ?? '']));
  const release = labels?.['app.kubernetes.io/instance'] ?? env.get('NLS_RELEASE_NAME') ?? '';
  const fullname = name.replace(/-operator$/, '');
  const need = (key: string) => {
    const value = env.get(key);
    if (!value) throw new Error(`Deployment ${namespace}/${name} has no ${key} in its operator container; it was not installed by this chart (or by a version before 0.2.0)`);
    return value;
  };
  return {
    release,
    namespace,
    deployment: name,
    webhookService: need('NLS_WEBHOOK_SERVICE'),
    webhookSecret: need('NLS_WEBHOOK_SECRET'),
    webhookConfigurations: [...split(need('NLS_VALIDATING_WEBHOOK_CONFIGURATIONS')), ...split(need('NLS_MUTATING_WEBHOOK_CONFIGURATIONS'))],
    guard: `${fullname}-agentdeployment-guard`,
    watchNamespaces: split(env.get('NLS_WATCH_NAMESPACES') ?? ''),
  };
}

/** The installation of `release` in `namespace`; undefined when no operator Deployment carries its label. */
export async function findInstallation(rest: KubeRest, release: string, namespace: string): Promise<Installation | undefined> {
  const list = await rest.list<DeploymentObject>('apps/v1', 'Deployment', {
    namespace,
    labelSelector: `app.kubernetes.io/instance=${release},app.kubernetes.io/component=operator`,
  });
  if (list.items.length === 0) return undefined;
  if (list.items.length > 1) {
    throw new Error(`release ${release} has ${list.items.length} operator Deployments in ${namespace} (${list.items.map((d) => d.metadata.name).join(', ')}); remove the stray one`);
  }
  return installationFromDeployment(list.items[0]);
}
