// AgentDeployment reconciler (container backend): fetch → (finalize on delete: revoke the keys
// minted for the agent) → resolve the model binding (modelRef: mint, keep or rotate the agent's
// key on the bound model, revoking it on the model it was bound to before (src/operator/agent-key.ts);
// externalAPI: check credentialsRef) → Deployment or Job, Service, ConfigMap → phase from the
// workload → status (modelBinding, runtime, replicas, conditions).
import { controllerOwnerKey } from './runtime/object-key';
import { API_GROUP_VERSION_V1BETA1 } from '../api/common';
import { AGENTDEPLOYMENT_DEFAULTS, AGENTDEPLOYMENT_KIND } from '../api/agentdeployment';
import { agentObjectNames, desiredAgentObjects, ResolvedModelBinding } from '../translate/agents/container';
import { apiKeysSecretName, ModelRef } from '../translate/keys/api-keys';
import { AGENT_KEY_ENTRY, agentKeyOwner } from '../translate/agents/agent-key';
import { SecretObject } from '../api-keys/key-store';
import { ensureAgentKey, keyAgentOf, releaseAgentKeys } from './agent-key';
import { describeErrors } from './generated-objects';
import { ReconcileDeps, recordTransitions, requeue, writeStatus } from './reconcile-context';
import { applyEach, describeFailures, failureReason } from './runtime/apply';
import { ConditionInput } from './runtime/conditions';
import { ControllerOptions, ReconcileRequest, ReconcileResult } from './runtime/controller';
import { addFinalizer, hasFinalizer, isBeingDeleted, removeFinalizer } from './runtime/finalizer';
import { KubeObject, objectRef } from '../kube/rest';
import { Logger } from '../runtime/log';
import type { AgentDeploymentV1beta1 } from '../api/v1beta1';

type AgentObject = AgentDeploymentV1beta1 & KubeObject;

/** Look at a key due for rotation no later than this (timers this long drift; a resync would catch it too). */
const MAX_ROTATION_WAIT_MS = 60 * 60_000;

function boundModel(agent: AgentObject): ModelRef | undefined {
  const ref = agent.spec.model.modelRef;
  return ref ? { kind: ref.kind, name: ref.name, namespace: agent.metadata.namespace! } : undefined;
}

/** `requeueAfterMs` on success: when the agent's key is due for rotation. */
type Binding = { ok: true; binding: ResolvedModelBinding; requeueAfterMs?: number } | { ok: false; condition: ConditionInput; requeueAfterMs?: number };

async function resolveModelRef(deps: ReconcileDeps, agent: AgentObject, model: ModelRef): Promise<Binding> {
  const modelObj = await deps.client.get<KubeObject & { spec: { model?: { name?: string } }; status?: { endpoints?: { external?: string } } }>(objectRef(API_GROUP_VERSION_V1BETA1, model.kind, model.name, model.namespace)).catch((err) => {
    if ((err as Error).name === 'KindNotServedError') return undefined;
    throw err;
  });
  if (!modelObj || modelObj.metadata.deletionTimestamp) {
    return { ok: false, condition: { type: 'ModelBound', status: false, reason: 'ModelNotFound', message: `spec.model.modelRef: ${model.kind} ${model.name} does not exist in namespace ${model.namespace}; create it or fix the name` }, requeueAfterMs: requeue.dependencyMissing };
  }
  const modelName = agent.spec.model.modelRef?.modelName ?? modelObj.spec.model?.name;
  if (!modelName) {
    return { ok: false, condition: { type: 'ModelBound', status: false, reason: 'ModelNameMissing', message: 'spec.model.modelRef.modelName is required for a PassthroughModel; set one of its declared model ids' } };
  }
  const keysSecret = await deps.client.get<SecretObject>(objectRef('v1', 'Secret', apiKeysSecretName(model.name), model.namespace));
  if (!keysSecret) {
    return { ok: false, condition: { type: 'ModelBound', status: false, reason: 'WaitingForModel', message: `${model.kind} ${model.name} has no API-key Secret yet; waiting for the operator to create it` }, requeueAfterMs: requeue.dependencyMissing };
  }
  const key = await ensureAgentKey(deps, agent, model, keysSecret);
  if (!key.ok) return { ok: false, condition: key.condition, requeueAfterMs: requeue.conflict };
  const baseURL = modelObj.status?.endpoints?.external ?? `https://${deps.gateway.external?.hostname ?? `llm.${deps.gateway.baseDomain}`}/v1`;
  return {
    ok: true,
    binding: {
      bindingMode: 'modelRef',
      apiType: 'openai',
      baseURL,
      modelName,
      credentialsRef: { name: agentObjectNames(agent.metadata.name).modelCredentials, key: AGENT_KEY_ENTRY },
      credentialsVersion: key.clientId,
      observedResourceUID: modelObj.metadata.uid,
    },
    requeueAfterMs: Math.max(1_000, Math.min(MAX_ROTATION_WAIT_MS, key.rotateAt.getTime() - Date.now())),
  };
}

async function resolveExternalAPI(deps: ReconcileDeps, agent: AgentObject): Promise<Binding> {
  const ext = agent.spec.model.externalAPI!;
  const ref = ext.credentialsRef ? { name: ext.credentialsRef.name, key: ext.credentialsRef.key ?? AGENTDEPLOYMENT_DEFAULTS.credentialsKey } : undefined;
  if (ref) {
    // Read uncached and only to check presence; the value is never copied anywhere.
    const secret = await deps.client.get<SecretObject>(objectRef('v1', 'Secret', ref.name, agent.metadata.namespace));
    if (!secret) return { ok: false, condition: { type: 'ModelBound', status: false, reason: 'CredentialSecretNotFound', message: `spec.model.externalAPI.credentialsRef: Secret ${ref.name} does not exist; create it with the API key under "${ref.key}"` }, requeueAfterMs: requeue.dependencyMissing };
    if (!secret.data?.[ref.key]) return { ok: false, condition: { type: 'ModelBound', status: false, reason: 'CredentialKeyNotFound', message: `spec.model.externalAPI.credentialsRef: Secret ${ref.name} has no "${ref.key}" entry; add the API key under that key` }, requeueAfterMs: requeue.dependencyMissing };
  }
  return { ok: true, binding: { bindingMode: 'externalAPI', apiType: ext.type, baseURL: ext.baseURL, modelName: ext.modelName, ...(ref ? { credentialsRef: ref } : {}) } };
}

interface WorkloadStatus {
  replicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  succeeded?: number;
  failed?: number;
  active?: number;
  conditions?: Array<{ type: string; status: string }>;
}

export async function reconcileAgentDeployment(deps: ReconcileDeps, req: ReconcileRequest, log: Logger): Promise<ReconcileResult> {
  const ref = objectRef(API_GROUP_VERSION_V1BETA1, AGENTDEPLOYMENT_KIND, req.name, req.namespace);
  let agent = await deps.client.get<AgentObject>(ref);
  if (!agent) return {};
  agent = { ...agent, apiVersion: API_GROUP_VERSION_V1BETA1, kind: AGENTDEPLOYMENT_KIND };
  if (isBeingDeleted(agent)) {
    if (!hasFinalizer(agent)) return {};
    await releaseAgentKeys({ ...deps, log }, agent, boundModel(agent), `${agentKeyOwner(keyAgentOf(agent))} was deleted`);
    await removeFinalizer(deps.client, agent);
    return {};
  }
  agent = await addFinalizer(deps.client, agent);

  const model = boundModel(agent);
  // An agent switched to externalAPI keeps no key on the model it used before.
  if (!model) await releaseAgentKeys({ ...deps, log }, agent, undefined, `${agentKeyOwner(keyAgentOf(agent))} now uses spec.model.externalAPI`, { deleteSecret: true });
  const binding = model ? await resolveModelRef(deps, agent, model) : await resolveExternalAPI(deps, agent);
  if (!binding.ok) {
    const changed = await writeStatus(deps.client, agent, { phase: 'Pending', conditions: [binding.condition, { type: 'Ready', status: false, reason: 'ModelNotBound', message: binding.condition.message }] });
    await recordTransitions(deps.events, agent, changed);
    return binding.requeueAfterMs ? { requeueAfterMs: binding.requeueAfterMs } : {};
  }
  const b = binding.binding;
  const modelBinding = { bindingMode: b.bindingMode, apiType: b.apiType, baseURL: b.baseURL, modelName: b.modelName, ...(b.credentialsRef ? { credentialsRef: b.credentialsRef } : {}), ...(b.observedResourceUID ? { observedResourceUID: b.observedResourceUID } : {}) };
  const bound: ConditionInput = { type: 'ModelBound', status: true, reason: 'Bound', message: `bound to ${b.modelName} at ${b.baseURL}` };

  const translation = desiredAgentObjects(agent, b);
  if (translation.errors.length > 0) {
    const message = describeErrors(translation.errors);
    const changed = await writeStatus(deps.client, agent, { phase: 'Failed', conditions: [bound, { type: 'ProviderReady', status: false, reason: 'BuildFailed', message }, { type: 'Ready', status: false, reason: 'BuildFailed', message }], extra: { modelBinding } });
    await recordTransitions(deps.events, agent, changed);
    return {};
  }
  const failures = await applyEach(deps.client, translation.objects);
  if (failures.length > 0) {
    const message = describeFailures(failures);
    const reason = failureReason(failures);
    const changed = await writeStatus(deps.client, agent, { phase: 'Failed', conditions: [bound, { type: 'ProviderReady', status: false, reason, message }, { type: 'Ready', status: false, reason, message }], extra: { modelBinding } });
    await recordTransitions(deps.events, agent, changed);
    return { requeueAfterMs: reason === 'Conflict' ? requeue.conflict : requeue.applyFailed };
  }
  const workload = await deps.client.get<KubeObject & { status?: WorkloadStatus; spec?: { replicas?: number } }>(objectRef(translation.workload.apiVersion, translation.workload.kind, translation.workload.name, agent.metadata.namespace));
  const st = workload?.status ?? {};
  let phase: string;
  let desired: number;
  if (translation.workload.kind === 'Job') {
    desired = 1;
    phase = st.succeeded ? 'Completed' : st.conditions?.some((c) => c.type === 'Failed' && c.status === 'True') ? 'Failed' : st.active ? 'Running' : 'Deploying';
  } else {
    desired = workload?.spec?.replicas ?? 1;
    phase = (st.readyReplicas ?? 0) >= desired ? 'Running' : 'Deploying';
  }
  const running = phase === 'Running' || phase === 'Completed';
  const changed = await writeStatus(deps.client, agent, {
    phase,
    conditions: [
      bound,
      { type: 'ProviderReady', status: true, reason: 'Applied', message: `${translation.workload.kind} ${translation.workload.name} applied` },
      { type: 'Ready', status: running, reason: running ? 'AgentReady' : 'WaitingForWorkload', message: running ? `${translation.workload.kind} is ${phase.toLowerCase()}` : `${st.readyReplicas ?? 0}/${desired} pods ready` },
    ],
    extra: {
      modelBinding,
      runtime: { workloadRef: { ...translation.workload, namespace: agent.metadata.namespace }, ...(translation.address ? { address: translation.address } : {}) },
      replicas: { desired, ready: st.readyReplicas ?? (st.succeeded ? 1 : 0), available: st.availableReplicas ?? 0 },
    },
  });
  await recordTransitions(deps.events, agent, changed);
  const waits = [running ? undefined : requeue.podsProgressing, binding.requeueAfterMs].filter((n): n is number => n !== undefined);
  return waits.length ? { requeueAfterMs: Math.min(...waits) } : {};
}

export function agentDeploymentController(deps: ReconcileDeps, namespace: string): ControllerOptions {
  return {
    apiVersion: API_GROUP_VERSION_V1BETA1,
    kind: AGENTDEPLOYMENT_KIND,
    namespace,
    reconcile: (req, log) => reconcileAgentDeployment(deps, req, log),
    secondary: [{ apiVersion: 'apps/v1', kind: 'Deployment', labelSelector: 'app.kubernetes.io/component=agent,app.kubernetes.io/managed-by=nebari-llm-serving', map: (obj: KubeObject) => controllerOwnerKey(obj, AGENTDEPLOYMENT_KIND) }],
  };
}
