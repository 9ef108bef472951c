// The chart README: install/upgrade in brief and the values table generated from the schema.
import { CHART_NAME } from '../../constructs';
import { version } from '../version';
import { KUBE_VERSION } from './chart-yaml';
import { valuesTable } from './values-file';

export function chartReadme(header: string): string {
  return `<!-- ${header.replace(/^# /, '').trim()} -->
# ${CHART_NAME}

LLM serving pack for Kubernetes: the \`LLMModel\`, \`PassthroughModel\` and \`AgentDeployment\` kinds
(\`llm.nebari.dev/v1beta1\`; \`v1alpha1\` is still served, deprecated), the operator that turns them into running models behind Envoy AI
Gateway, and its admission webhooks. Version ${version}; Kubernetes ${KUBE_VERSION.replace('-0', '')}.

## Install

\`\`\`sh
helm install nebari-llm-serving oci://<registry>/${CHART_NAME} --version ${version} \\
  --namespace nebari-llm-serving-system --create-namespace \\
  --set platform.baseDomain=example.com
\`\`\`

Helm creates the release namespace (\`--create-namespace\`); the chart does not (\`namespace.create\`
is false, because Helm 4 writes its release record into the namespace before creating any chart
object). Models are admitted only in the release namespace, which needs no label.
\`platform.baseDomain\` is needed to publish models; without it the webhooks work and every model
reports \`Ready=False\` with reason \`OperatorNotConfigured\`.

Several releases can live side by side in different namespaces as long as their release names
differ: cluster-scoped objects (webhook configurations, ClusterRole, GatewayClass) are named after
the release.

Webhook certificates: \`webhook.certificates.mode=self-managed\` (default; the operator creates
Secret \`<release>-webhook-server-cert\` and injects the CA into its own webhook configurations) or
\`cert-manager\` (an Issuer and Certificate; cert-manager injects the CA). The chart never renders a
\`caBundle\`, so upgrades, \`kubectl apply\` of the plain bundles and Argo CD never overwrite the
injected CA.

## Upgrade

Helm never upgrades \`crds/\`. Apply the new CRDs server-side first, then upgrade:

\`\`\`sh
nls crds apply --chart oci://<registry>/${CHART_NAME} --version <new>
helm upgrade nebari-llm-serving oci://<registry>/${CHART_NAME} --version <new> -n nebari-llm-serving-system
\`\`\`

Releases that change the AgentDeployment webhooks use the guarded upgrade (\`nls upgrade\`), which
drives \`webhook.upgradeGuard.enabled\` and \`webhook.agentDeployment.enabled\`.

## Without Helm

\`deploy/\` holds the same objects as plain manifests, split for the guarded upgrade:
\`agentdeployment-webhook-guard.yaml\`, \`controller.yaml\` (CRDs, operator, webhooks without the
AgentDeployment routes) and \`agentdeployment-webhook.yaml\` (the complete webhook configurations).

## Values

Every value is checked by \`values.schema.json\`; unknown keys are rejected.

${valuesTable()}
`;
}
