// Admission rules for AgentDeployment that the CRD schema and its CEL rules cannot express: the
// referenced model exists, URLs are usable, provider overrides stay inside their allow-list, and
// the confused-deputy guard: the operator reads Secrets with its own, wide permissions, so every
// Secret an AgentDeployment names must be one the *requesting user* may `get` themselves; and
// binding to a restricted model needs the RBAC verb `bind` on it (agentBinding).
import { AGENTDEPLOYMENT_DEFAULTS, AGENTDEPLOYMENT_KIND, AGENTDEPLOYMENT_LIMITS } from '../api/agentdeployment';
import { resourceListProblems } from '../api/common';
import { LLMMODEL_KIND } from '../api/llmmodel';
import type { AdmissionContext, KindAdmission } from './admission';
import { agentOverrideProblems } from './agent-overrides';
import { httpURLProblem } from './http-url';
import { imageProblem } from './image-policy';
import { jsonEqual } from './json-patch';
import type { ClusterLookups, ModelKind } from './lookups';
import { type BindingCheck, checkModelBinding } from './model-binding';
import { envReview } from './pod-references';
import { type AdmissionRequest, type UserInfo, isRecord } from './review';
import { type SecretReference, checkSecretAccess } from './secret-access';
import { Findings, type Verdict, lookupFailed } from './verdict';
import type { AgentDeploymentV1beta1 } from '../api/v1beta1';

const dns1035Label = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

/** Every Secret (and ConfigMap) the AgentDeployment makes the operator read or mount. */
export function referencedSecrets(agent: AgentDeploymentV1beta1): SecretReference[] {
  const credentials = agent.spec.model.externalAPI?.credentialsRef;
  return [
    ...(credentials?.name ? [{ name: credentials.name, field: 'spec.model.externalAPI.credentialsRef.name' }] : []),
    ...envReview(agent.spec.container?.env, 'spec.container.env').references,
  ];
}

/**
 * What the agent's pod would carry that cannot be allowed: `valueFrom` kinds the Secret guard
 * cannot review, and an image outside the installation's allow-list.
 */
export function agentDeploymentPodFindings(agent: AgentDeploymentV1beta1, allowedImages: readonly string[], findings: Findings): void {
  for (const problem of envReview(agent.spec.container?.env, 'spec.container.env').problems) findings.deny(problem);
  const image = agent.spec.container?.image;
  const problem = image ? imageProblem(image, 'spec.container.image', allowedImages) : undefined;
  if (problem) findings.deny(problem);
}

/** Field-level checks of one AgentDeployment object (no cluster state). */
export function agentDeploymentFieldFindings(agent: AgentDeploymentV1beta1, findings: Findings): void {
  const name = agent.metadata?.name ?? '';
  if (name.length > AGENTDEPLOYMENT_LIMITS.maxNameLength || !dns1035Label.test(name)) {
    findings.deny(
      `metadata.name: "${name}" is not a DNS-1035 label (at most 63 lower-case letters, digits or '-', starting with a letter and ending with a letter or digit); ` +
        'it names the agent Service, so rename the object',
    );
  }
  const external = agent.spec.model.externalAPI;
  if (external) {
    const problem = httpURLProblem(external.baseURL, 'spec.model.externalAPI.baseURL');
    if (problem) findings.deny(problem);
    if (external.type !== 'custom' && external.credentialsRef === undefined) {
      findings.warn(
        `spec.model.externalAPI.credentialsRef is not set, so the agent calls the ${external.type} API without an API key; reference a Secret holding the key`,
      );
    }
  }
  const otlp = agent.spec.observability?.otlp?.endpoint;
  if (otlp !== undefined) {
    const problem = httpURLProblem(otlp, 'spec.observability.otlp.endpoint');
    if (problem) findings.deny(problem);
  }
  // The schema keeps the sections verbatim; the allow-list is enforced here.
  for (const problem of agentOverrideProblems(agent.spec.overrides)) findings.deny(problem);
  if (agent.spec.lifecycle === 'job' && agent.spec.port !== undefined && agent.spec.port !== AGENTDEPLOYMENT_DEFAULTS.port) {
    findings.warn('spec.port is ignored for a job agent, which gets no Service; remove it or use lifecycle: deployment');
  }
}

/**
 * Who may bind an agent to a model: the operator mints the agent a key whose value its author can
 * read (the agent's key Secret is in their namespace), so binding is a way to get a key. A public
 * model grants keys to every authenticated user anyway. A restricted one (not `spec.access.public`)
 * grants them to its groups, which the portal checks; here the requesting user must hold the RBAC
 * verb `bind` on that model.
 */
function agentBinding(kind: ModelKind, name: string, namespace: string): BindingCheck {
  return {
    field: 'spec.model.modelRef.name',
    kind,
    name,
    namespace,
    action: 'bind agents to',
    refusal: (who) => `${kind} "${name}" is restricted (not spec.access.public) and ${who} may not bind agents to it, since the agent gets an API key for it`,
    alternative: 'bind a public model',
  };
}

async function checkModelReference(
  agent: AgentDeploymentV1beta1,
  namespace: string,
  user: UserInfo,
  lookups: ClusterLookups,
  findings: Findings,
): Promise<void> {
  const ref = agent.spec.model.modelRef;
  if (!ref) return;
  let model;
  try {
    model = await lookups.getModel(ref.kind as ModelKind, namespace, ref.name);
  } catch (error) {
    findings.deny(lookupFailed(`whether ${ref.kind} "${ref.name}" exists`, error), 503);
    return;
  }
  if (!model) {
    findings.deny(
      `spec.model.modelRef.name: ${ref.kind} "${ref.name}" does not exist in namespace "${namespace}"; create it first or fix the reference`,
    );
    return;
  }
  const spec = model.spec as { model?: { name?: string }; models?: { declared?: string[]; catchAll?: boolean }; access?: { public?: boolean } } | undefined;
  if (spec?.access?.public !== true) await checkModelBinding(agentBinding(ref.kind as ModelKind, ref.name, namespace), user, lookups, findings);
  if (ref.kind === LLMMODEL_KIND && ref.modelName !== undefined && spec?.model?.name && ref.modelName !== spec.model.name) {
    findings.warn(
      `spec.model.modelRef.modelName: "${ref.modelName}" differs from the id LLMModel "${ref.name}" serves ("${spec.model.name}"); requests for it will not be routed`,
    );
  }
  if (ref.kind !== LLMMODEL_KIND && ref.modelName !== undefined && spec?.models?.catchAll !== true) {
    const declared = spec?.models?.declared ?? [];
    if (!declared.includes(ref.modelName)) {
      findings.warn(
        `spec.model.modelRef.modelName: "${ref.modelName}" is not declared by PassthroughModel "${ref.name}" (${declared.join(', ') || 'none'}); requests for it will not be routed`,
      );
    }
  }
}

export async function validateAgentDeployment(request: AdmissionRequest<AgentDeploymentV1beta1>, context: AdmissionContext): Promise<Verdict> {
  const agent = request.object as AgentDeploymentV1beta1;
  const namespace = agent.metadata?.namespace ?? request.namespace ?? '';
  const findings = new Findings();
  // Placement first: outside the watched namespaces nothing would reconcile the agent, and the
  // operator has no rights there to look anything up.
  if (request.operation === 'CREATE' && !context.agentNamespaces.includes(namespace)) {
    findings.deny(
      `metadata.namespace: "${namespace}" is not watched by this installation, so nothing would run the agent; create the AgentDeployment in ` +
        `${context.agentNamespaces.map((n) => `"${n}"`).join(', ')}, or add "${namespace}" to the chart value watchNamespaces (the namespace then gets the operator's Role)`,
    );
    return findings.verdict();
  }
  agentDeploymentFieldFindings(agent, findings);
  const oldAgent = request.oldObject as AgentDeploymentV1beta1 | undefined;
  for (const problem of resourceListProblems(agent.spec.container?.resources, 'spec.container.resources', oldAgent?.spec?.container?.resources)) findings.deny(problem);
  // On CREATE and spec changes only, so a stored agent's finalizer writes are never refused.
  if (!oldAgent || !jsonEqual(oldAgent.spec, agent.spec)) agentDeploymentPodFindings(agent, context.allowedImages ?? [], findings);
  // The model may be deleted later; only a new or changed reference must point at a live model,
  // so that later metadata updates (finalizers) are never blocked.
  const previousRef = oldAgent?.spec?.model?.modelRef;
  const modelRefChanged = request.operation === 'CREATE' || !jsonEqual(previousRef, agent.spec.model.modelRef);
  await Promise.all([
    modelRefChanged ? checkModelReference(agent, namespace, request.userInfo, context.lookups, findings) : Promise.resolve(),
    // Every CREATE and UPDATE, even when unchanged: whoever writes the object now vouches for it.
    checkSecretAccess(referencedSecrets(agent), { user: request.userInfo, namespace, kind: 'agent' }, context.lookups, findings),
  ]);
  return findings.verdict();
}

/**
 * Defaults that depend on other fields or on the cluster: one replica for a deployment agent
 * (a job runs one pod, so it gets none), and the model id of a referenced LLMModel.
 * Runs before schema validation, so every field read is type-checked first.
 */
export async function defaultAgentDeployment(agent: AgentDeploymentV1beta1, namespace: string, lookups: ClusterLookups): Promise<void> {
  const spec: unknown = agent.spec;
  if (!isRecord(spec)) return;
  const lifecycle = spec.lifecycle ?? AGENTDEPLOYMENT_DEFAULTS.lifecycle;
  if (lifecycle === 'deployment' && spec.replicas === undefined) spec.replicas = AGENTDEPLOYMENT_DEFAULTS.replicas;

  const model = spec.model;
  const ref = isRecord(model) ? model.modelRef : undefined;
  if (!isRecord(ref) || ref.kind !== LLMMODEL_KIND || typeof ref.name !== 'string' || ref.modelName !== undefined) return;
  try {
    const found = await lookups.getModel(LLMMODEL_KIND, namespace, ref.name);
    const served = (found?.spec as { model?: { name?: unknown } } | undefined)?.model?.name;
    if (typeof served === 'string' && served) ref.modelName = served;
  } catch {
    // Leave it unset: the validating webhook reports an unreachable or missing model.
  }
}

export const agentDeploymentAdmission: KindAdmission<AgentDeploymentV1beta1> = {
  kind: AGENTDEPLOYMENT_KIND,
  resource: 'agentdeployment',
  validate: validateAgentDeployment,
  applyDefaults: (object, request, context) =>
    defaultAgentDeployment(object, object.metadata?.namespace ?? request.namespace ?? '', context.lookups),
};
