// Chart.yaml: version and appVersion from package.json (the single source), Artifact Hub metadata.
import { stringify } from 'yaml';
import { API_VERSION_V1BETA1 } from '../api/common';
import { KIND_DEFINITIONS } from '../api/kinds';
import { HOME, version } from '../version';
import { CHART_NAME } from '../../constructs';
import { defaultValues } from './values-schema';
import { imageReference } from '../../constructs';
import { OLDEST_KUBERNETES_MINOR } from '../kubernetes-versions';

export const KUBE_VERSION = `>=${OLDEST_KUBERNETES_MINOR}.0-0`;
export { HOME };

/** Changes listed on Artifact Hub for this version. */
export const CHANGES = [
  { kind: 'added', description: 'Chart generated from cdk8s constructs with a strict values schema' },
  { kind: 'added', description: 'AgentDeployment kind, admission webhooks and the upgrade guard' },
  { kind: 'added', description: 'Webhook certificates by cert-manager or self-managed by the operator' },
];

export function chartYaml(): string {
  // Artifact Hub shows each CRD at the version it stores (v1alpha1 is still served, deprecated).
  const crds = KIND_DEFINITIONS.map((d) => ({ kind: d.kind, version: API_VERSION_V1BETA1, name: `${d.plural}.llm.nebari.dev`, displayName: d.kind, description: firstSentence(d) }));
  const chart = {
    apiVersion: 'v2',
    name: CHART_NAME,
    version,
    appVersion: version,
    kubeVersion: KUBE_VERSION,
    type: 'application',
    description: 'LLM serving pack for Kubernetes: LLMModel, PassthroughModel and AgentDeployment kinds, their operator and admission webhooks, served through Envoy AI Gateway.',
    home: HOME,
    sources: [HOME],
    keywords: ['llm', 'inference', 'vllm', 'envoy-ai-gateway', 'gateway-api', 'operator', 'nebari'],
    maintainers: [{ name: 'Nebari', url: 'https://nebari.dev' }],
    annotations: {
      'artifacthub.io/license': 'Apache-2.0',
      'artifacthub.io/operator': 'true',
      'artifacthub.io/prerelease': String(/-/.test(version)),
      'artifacthub.io/crds': stringify(crds, { lineWidth: 0 }),
      'artifacthub.io/images': stringify([{ name: 'operator', image: imageReference(defaultValues().operator.image) }], { lineWidth: 0 }),
      'artifacthub.io/changes': stringify(CHANGES, { lineWidth: 0 }),
    },
  };
  return stringify(chart, { lineWidth: 0 });
}

function firstSentence(def: { kind: string; schema?: unknown }): string {
  const d = (def.schema as { description?: string } | undefined)?.description;
  return d ? d.split(/(?<=\.)\s/)[0] : `${def.kind} of llm.nebari.dev`;
}
