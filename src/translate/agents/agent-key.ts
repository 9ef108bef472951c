// The API key the operator mints for an AgentDeployment bound by modelRef, as pure decisions.
// The key lives twice: as an entry of the model's key Secret (with a metadata record naming the
// agent, source `agent`, and an expiry) and in the agent's own Secret `<agent>-model-key`, whose
// annotations record which model and client ID the key belongs to. Those annotations, not the
// agent's current spec, say where the key must be revoked when the agent is re-pointed or deleted.
// Expiry: every agent key expires AGENT_KEY_LIFETIME_MS after its mint; the operator mints a new
// one AGENT_KEY_ROTATE_BEFORE_MS before that and leaves the old one to expire, so pods still
// rolling to the new key keep working meanwhile.
import type { ApiKeyRecord, KeyAgent, ModelKind, ModelRef } from '../keys/api-keys';
import { apiKeyRecordsOf } from '../keys/api-keys';

export const AGENT_KEY_LIFETIME_MS = 30 * 24 * 60 * 60_000;
export const AGENT_KEY_ROTATE_BEFORE_MS = 10 * 24 * 60 * 60_000;

/** Annotations on the agent's key Secret. */
export const ANNOTATION_KEY_MODEL_KIND = 'llm.nebari.dev/key-model-kind';
export const ANNOTATION_KEY_MODEL_NAME = 'llm.nebari.dev/key-model-name';
export const ANNOTATION_KEY_CLIENT_ID = 'llm.nebari.dev/key-client-id';
export const ANNOTATION_KEY_EXPIRES_AT = 'llm.nebari.dev/key-expires-at';
/** The data entry of the agent's key Secret holding the key. */
export const AGENT_KEY_ENTRY = 'apiKey';

/** The key's owner as recorded (`createdBy`) and audited: the operator mints on the agent's behalf. */
export function agentKeyOwner(agent: { namespace: string; name: string }): string {
  return `AgentDeployment ${agent.namespace}/${agent.name}`;
}

/** What the agent's key Secret says about the key it holds; undefined fields when it says nothing. */
export interface AgentKeyState {
  readonly model?: ModelRef;
  readonly clientId?: string;
  readonly expiresAt?: string;
}

export function agentKeyStateOf(annotations: Record<string, string> | undefined, namespace: string): AgentKeyState {
  const kind = annotations?.[ANNOTATION_KEY_MODEL_KIND];
  const name = annotations?.[ANNOTATION_KEY_MODEL_NAME];
  const model = (kind === 'LLMModel' || kind === 'PassthroughModel') && name ? { kind: kind as ModelKind, name, namespace } : undefined;
  return { model, clientId: annotations?.[ANNOTATION_KEY_CLIENT_ID] || undefined, expiresAt: annotations?.[ANNOTATION_KEY_EXPIRES_AT] || undefined };
}

export function sameModel(a: ModelRef | undefined, b: ModelRef | undefined): boolean {
  return !!a && !!b && a.kind === b.kind && a.name === b.name && a.namespace === b.namespace;
}

export function describeModel(model: ModelRef): string {
  return `${model.kind} ${model.name}`;
}

/** What to do with the agent's key this reconcile. */
export type AgentKeyPlan =
  | { readonly action: 'keep'; readonly rotateAt: Date }
  /** Mint a key on the bound model; first revoke the agent's keys on `revokeOn` (the model it was bound to before). */
  | { readonly action: 'mint'; readonly reason: string; readonly revokeOn?: ModelRef };

/**
 * Decide from the agent's key Secret (`held`), the model the spec binds, whether the held key is
 * still in that model's key Secret (`live`), and the time.
 */
export function planAgentKey(held: AgentKeyState | undefined, bound: ModelRef, live: boolean, now: Date): AgentKeyPlan {
  if (!held?.model || !held.clientId) return { action: 'mint', reason: 'the agent has no key yet' };
  if (!sameModel(held.model, bound)) {
    return { action: 'mint', reason: `the agent now uses ${describeModel(bound)} instead of ${describeModel(held.model)}`, revokeOn: held.model };
  }
  if (!live) return { action: 'mint', reason: `its key ${held.clientId} is no longer one of the model's keys (expired or revoked)` };
  const expiry = held.expiresAt ? Date.parse(held.expiresAt) : NaN;
  const rotateAt = new Date(expiry - AGENT_KEY_ROTATE_BEFORE_MS);
  if (isNaN(expiry) || rotateAt.getTime() <= now.getTime()) return { action: 'mint', reason: `its key ${held.clientId} expires at ${held.expiresAt ?? '(unknown)'}; rotating` };
  return { action: 'keep', rotateAt };
}

/** The client IDs of the keys minted for the agent with `uid`, from a model's metadata records. */
export function agentKeyIds(metadata: Record<string, string> | undefined, uid: string): string[] {
  return apiKeyRecordsOf(metadata)
    .filter((r: ApiKeyRecord) => r.agent?.uid === uid)
    .map((r) => r.clientId);
}

/** Labels and annotations of the agent's key Secret once it holds `clientId` on `model`. */
export function agentKeySecretMetadata(model: ModelRef, clientId: string, expiresAt: Date): { labels: Record<string, string>; annotations: Record<string, string> } {
  return {
    labels: { 'app.kubernetes.io/managed-by': 'nebari-llm-serving' },
    annotations: {
      [ANNOTATION_KEY_MODEL_KIND]: model.kind,
      [ANNOTATION_KEY_MODEL_NAME]: model.name,
      [ANNOTATION_KEY_CLIENT_ID]: clientId,
      [ANNOTATION_KEY_EXPIRES_AT]: expiresAt.toISOString(),
    },
  };
}

/** Whether a Secret is the agent's own: it has an owner reference to exactly this AgentDeployment. */
export function ownedByAgent(secret: { metadata: { ownerReferences?: ReadonlyArray<{ kind?: string; uid?: string }> } }, agent: KeyAgent): boolean {
  return (secret.metadata.ownerReferences ?? []).some((o) => o.kind === 'AgentDeployment' && o.uid === agent.uid);
}

/** The condition message when the agent's key Secret name is taken by a Secret the agent does not own. */
export function keySecretConflictMessage(agent: KeyAgent, secretName: string): string {
  return (
    `Secret ${agent.namespace}/${secretName} exists and is not owned by AgentDeployment ${agent.name} (no owner reference to uid ${agent.uid}), ` +
    `so the operator does not write the agent's key into it; delete or rename that Secret, or rename the agent`
  );
}
