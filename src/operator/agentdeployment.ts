// AgentDeployment reconciler (container backend): fetch → (finalize on delete: revoke the key
// minted for the agent) → resolve the model binding (modelRef: mint or reuse the agent's key on
// the bound model; externalAPI: check credentialsRef) → Deployment or Job, Service, ConfigMap →
// phase from the workload → status (modelBinding, runtime, replicas, conditions).
import { controllerOwnerKey } from './runtime/object-key';
import { createHash, randomBytes } from 'node:crypto';
import { API_GROUP_VERSION_V1BETA1 } from '../api/common';
import { AGENTDEPLOYMENT_DEFAULTS, AGENTDEPLOYMENT_KIND } from '../api/agentdeployment';
import { agentObjectNames, desiredAgentObjects, ResolvedModelBinding } from '../translate/agents/container';
import { apiKeyMetadataConfigMapName, apiKeysSecretName, clientIdFor, formatApiKey, ModelRef } from '../translate/keys/api-keys';
import { keysFieldManager, SecretObject } from '../api-keys/key-store';
import { describeErrors } from './generated-objects';
import { ReconcileDeps, recordTransitions, requeue, writeStatus } from './reconcile-context';
import { applyEach, describeFailures, failureReason, ownerReferenceTo } from './runtime/apply';
import { ConditionInput } from './runtime/conditions';
import { ControllerOptions, ReconcileRequest, ReconcileResult } from './runtime/controller';
import { addFinalizer, hasFinalizer, isBeingDeleted, removeFinalizer } from './runtime/finalizer';
import { KubeObject, isConflict, isNotFound, objectRef } from '../kube/rest';
import { Logger } from '../runtime/log';
import type { AgentDeploymentV1beta1 } from '../api/v1beta1';

type AgentObject = AgentDeploymentV1beta1 & KubeObject;

const API_KEY_ENTRY = 'apiKey';

/** The client ID of the key minted for `agent` on `model`: deterministic, so a restart reuses it. */
export function agentClientId(model: ModelRef, agent: { namespace: string; name: string }): string {
  return clientIdFor(model, `agent-${agent.name}-${createHash('sha256').update(`${agent.namespace}/${agent.name}`).digest('hex').slice(0, 8)}`, 0);
}

function boundModel(agent: AgentObject): ModelRef | undefined {
  const ref = agent.spec.model.modelRef;
  return ref ? { kind: ref.kind, name: ref.name, namespace: agent.metadata.namespace! } : undefined;
}

type Binding = { ok: true; binding: ResolvedModelBinding } | { ok: false; condition: ConditionInput; requeueAfterMs?: number };

/** The agent's own key Secret (owned by the agent): created once with a fresh key, then reused. */
async function agentKey(deps: ReconcileDeps, agent: AgentObject): Promise<string> {
  const name = agentObjectNames(agent.metadata.name).modelCredentials;
  const ref = objectRef('v1', 'Secret', name, agent.metadata.namespace);
  const existing = await deps.client.get<SecretObject>(ref);
  const stored = existing?.data?.[API_KEY_ENTRY];
  if (stored) return Buffer.from(stored, 'base64').toString('utf8');
  const key = formatApiKey(randomBytes(32));
  try {
    await deps.client.create(
      { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: agent.metadata.namespace, ownerReferences: [ownerReferenceTo(agent)], labels: { 'app.kubernetes.io/managed-by': 'nebari-llm-serving' } }, type: 'Opaque', data: { [API_KEY_ENTRY]: Buffer.from(key).toString('base64') } } as KubeObject,
      { fieldManager: keysFieldManager },
    );
    return key;
  } catch (err) {
    if (!isConflict(err)) throw err;
    const again = await deps.client.get<SecretObject>(ref);
    return Buffer.from(again?.data?.[API_KEY_ENTRY] ?? '', 'base64').toString('utf8');
  }
}

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
  const key = await agentKey(deps, agent);
  const clientId = agentClientId(model, { namespace: agent.metadata.namespace!, name: agent.metadata.name });
  const encoded = Buffer.from(key).toString('base64');
  if (keysSecret.data?.[clientId] !== encoded) {
    await deps.client.request('PATCH', `/api/v1/namespaces/${model.namespace}/configmaps/${apiKeyMetadataConfigMapName(model.name)}`, {
      query: { fieldManager: keysFieldManager },
      body: { data: { [clientId]: JSON.stringify({ createdBy: `AgentDeployment ${agent.metadata.namespace}/${agent.metadata.name}`, createdAt: new Date().toISOString(), description: 'minted by the operator for an AgentDeployment' }) } },
      contentType: 'application/merge-patch+json',
    }).catch((err) => {
      if (!isNotFound(err)) throw err;
    });
    await deps.client.request('PATCH', `/api/v1/namespaces/${model.namespace}/secrets/${keysSecret.metadata.name}`, {
      query: { fieldManager: keysFieldManager },
      body: { data: { [clientId]: encoded } },
      contentType: 'application/merge-patch+json',
    });
  }
  const baseURL = modelObj.status?.endpoints?.external ?? `https://${deps.gateway.external?.hostname ?? `llm.${deps.gateway.baseDomain}`}/v1`;
  return {
    ok: true,
    binding: {
      bindingMode: 'modelRef',
      apiType: 'openai',
      baseURL,
      modelName,
      credentialsRef: { name: agentObjectNames(agent.metadata.name).modelCredentials, key: API_KEY_ENTRY },
      observedResourceUID: modelObj.metadata.uid,
    },
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

/** Revoke the key minted for the agent (finalizer). */
async function revokeAgentKey(deps: ReconcileDeps, agent: AgentObject): Promise<void> {
  const model = boundModel(agent);
  if (!model) return;
  const clientId = agentClientId(model, { namespace: agent.metadata.namespace!, name: agent.metadata.name });
  for (const [kind, name] of [['secrets', apiKeysSecretName(model.name)], ['configmaps', apiKeyMetadataConfigMapName(model.name)]] as const) {
    await deps.client
      .request('PATCH', `/api/v1/namespaces/${model.namespace}/${kind}/${name}`, { query: { fieldManager: keysFieldManager }, body: { data: { [clientId]: null } }, contentType: 'application/merge-patch+json' })
      .catch((err) => {
        if (!isNotFound(err)) throw err;
      });
  }
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
    await revokeAgentKey({ ...deps, log }, agent);
    await removeFinalizer(deps.client, agent);
    return {};
  }
  agent = await addFinalizer(deps.client, agent);

  const model = boundModel(agent);
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
  return running ? {} : { requeueAfterMs: requeue.podsProgressing };
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
