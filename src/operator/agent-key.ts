// The key the operator mints for an AgentDeployment bound by modelRef (decisions in
// src/translate/agents/agent-key.ts): minted through the same path as `nls keys mint` (metadata
// record naming the agent, an expiry, an audit entry with actor `operator`), written into the
// agent's own Secret, rotated before it expires, and revoked (audit entry, Event) when the agent is
// re-pointed to another model, switched to externalAPI, or deleted. A Secret of the key Secret's
// name that the agent does not own is never written to (reason KeySecretConflict).
import { createHash } from 'node:crypto';
import { mintKey, revokeKey, keysFieldManager, type SecretObject, type ConfigMapObject } from '../api-keys/key-store';
import { agentObjectNames } from '../translate/agents/container';
import {
  AGENT_KEY_ENTRY,
  AGENT_KEY_LIFETIME_MS,
  AGENT_KEY_ROTATE_BEFORE_MS,
  agentKeyIds,
  agentKeyOwner,
  agentKeySecretMetadata,
  agentKeyStateOf,
  describeModel,
  keySecretConflictMessage,
  ownedByAgent,
  planAgentKey,
  sameModel,
} from '../translate/agents/agent-key';
import { apiKeyMetadataConfigMapName, clientIdFor, type KeyAgent, type ModelRef } from '../translate/keys/api-keys';
import { OPERATOR_ACTOR } from './key-revocation';
import type { ReconcileDeps } from './reconcile-context';
import { ownerReferenceTo } from './runtime/apply';
import type { ConditionInput } from './runtime/conditions';
import { KubeObject, isNotFound, objectRef } from '../kube/rest';

/**
 * The client ID of the key versions before 0.2.0 minted for `agent` on `model` (fixed suffix 0,
 * no record of the agent): still revoked with the agent's other keys, so an upgrade leaves none behind.
 */
export function legacyAgentClientId(model: ModelRef, agent: { namespace: string; name: string }): string {
  return clientIdFor(model, `agent-${agent.name}-${createHash('sha256').update(`${agent.namespace}/${agent.name}`).digest('hex').slice(0, 8)}`, 0);
}

export function keyAgentOf(agent: KubeObject): KeyAgent {
  return { namespace: agent.metadata.namespace!, name: agent.metadata.name, uid: agent.metadata.uid! };
}

function keySecretRef(agent: KubeObject) {
  return objectRef('v1', 'Secret', agentObjectNames(agent.metadata.name).modelCredentials, agent.metadata.namespace);
}

export type AgentKeyResult = { ok: true; clientId: string; rotateAt: Date } | { ok: false; condition: ConditionInput };

/** The agent's key on `model` (whose key Secret, with data, is `modelKeys`): minted, rotated or kept. */
export async function ensureAgentKey(deps: ReconcileDeps, agent: KubeObject, model: ModelRef, modelKeys: SecretObject): Promise<AgentKeyResult> {
  const who = keyAgentOf(agent);
  const secretName = agentObjectNames(agent.metadata.name).modelCredentials;
  const held = await deps.client.get<SecretObject>(keySecretRef(agent));
  if (held && !ownedByAgent(held, who)) {
    return { ok: false, condition: { type: 'ModelBound', status: false, reason: 'KeySecretConflict', message: keySecretConflictMessage(who, secretName) } };
  }
  const state = held ? agentKeyStateOf(held.metadata.annotations, who.namespace) : undefined;
  const live = !!state?.clientId && modelKeys.data?.[state.clientId] !== undefined && modelKeys.data[state.clientId] === held?.data?.[AGENT_KEY_ENTRY];
  const now = new Date();
  const plan = planAgentKey(state, model, live, now);
  if (plan.action === 'keep') return { ok: true, clientId: state!.clientId!, rotateAt: plan.rotateAt };

  if (plan.revokeOn) await revokeAgentKeysOn(deps, agent, plan.revokeOn, `${agentKeyOwner(who)} now uses ${describeModel(model)}`);
  const expiresAt = new Date(now.getTime() + AGENT_KEY_LIFETIME_MS);
  const minted = await mintKey(deps.client, model, agentKeyOwner(who), `minted by the operator for ${agentKeyOwner(who)}`, {
    actor: OPERATOR_ACTOR,
    source: 'agent',
    agent: who,
    expiresAt,
    reason: plan.reason,
    waitMs: 10_000,
  });
  const meta = agentKeySecretMetadata(model, minted.clientId, expiresAt);
  const data = { [AGENT_KEY_ENTRY]: Buffer.from(minted.apiKey).toString('base64') };
  try {
    if (held) {
      // Guarded by the resourceVersion read: a Secret replaced meanwhile is not overwritten.
      await deps.client.request('PATCH', `/api/v1/namespaces/${who.namespace}/secrets/${secretName}`, {
        query: { fieldManager: keysFieldManager },
        body: { metadata: { resourceVersion: held.metadata.resourceVersion, ...meta }, data },
        contentType: 'application/merge-patch+json',
      });
    } else {
      await deps.client.create(
        { apiVersion: 'v1', kind: 'Secret', metadata: { name: secretName, namespace: who.namespace, ownerReferences: [ownerReferenceTo(agent)], ...meta }, type: 'Opaque', data } as KubeObject,
        { fieldManager: keysFieldManager },
      );
    }
  } catch (err) {
    // The key reached no one: take it back rather than leave an unused key on the model.
    await revokeKey(deps.client, model, minted.clientId, { actor: OPERATOR_ACTOR, reason: `${agentKeyOwner(who)}: its key Secret could not be written`, waitMs: 10_000 }).catch(() => undefined);
    throw err;
  }
  // A key from before agent keys were recorded is replaced now; revoke it (a no-op when there is none).
  if (!state?.model) await revokeAgentKeysOn(deps, agent, model, `${agentKeyOwner(who)} got a recorded key`, [minted.clientId]);
  await deps.events.record(agent, 'Normal', 'ApiKeyMinted', `API key ${minted.clientId} minted on ${describeModel(model)}, expires ${expiresAt.toISOString()}: ${plan.reason}`);
  return { ok: true, clientId: minted.clientId, rotateAt: new Date(expiresAt.getTime() - AGENT_KEY_ROTATE_BEFORE_MS) };
}

/**
 * Revoke every key minted for the agent on `model` (its records name the agent's uid, plus the
 * legacy fixed client ID), except `keep`: each is removed from the model's key Secret and metadata
 * with an audit entry by `operator`, and an Event on the agent.
 */
export async function revokeAgentKeysOn(deps: ReconcileDeps, agent: KubeObject, model: ModelRef, reason: string, keep: string[] = []): Promise<void> {
  const who = keyAgentOf(agent);
  const metadata = await deps.client.get<ConfigMapObject>(objectRef('v1', 'ConfigMap', apiKeyMetadataConfigMapName(model.name), model.namespace));
  const ids = [...new Set([...agentKeyIds(metadata?.data, who.uid), legacyAgentClientId(model, who)])].filter((id) => !keep.includes(id));
  for (const clientId of ids) {
    const removed = await revokeKey(deps.client, model, clientId, { actor: OPERATOR_ACTOR, reason, waitMs: 10_000 });
    if (removed) {
      await deps.events.record(agent, 'Normal', 'ApiKeyRevoked', `API key ${clientId} revoked on ${describeModel(model)}: ${reason}`);
    } else if (metadata?.data?.[clientId] !== undefined) {
      // A record whose key is already gone (a mint cut short): remove it too, so nothing is left behind.
      await deps.client
        .request('PATCH', `/api/v1/namespaces/${model.namespace}/configmaps/${metadata.metadata.name}`, { query: { fieldManager: keysFieldManager }, body: { data: { [clientId]: null } }, contentType: 'application/merge-patch+json' })
        .catch((err) => {
          if (!isNotFound(err)) throw err;
        });
    }
  }
}

/**
 * Revoke all of the agent's keys: on the model its key Secret records and on `bound` (the model its
 * spec names, if any). With `deleteSecret`, the agent's key Secret goes too (switch to externalAPI).
 */
export async function releaseAgentKeys(deps: ReconcileDeps, agent: KubeObject, bound: ModelRef | undefined, reason: string, opts: { deleteSecret?: boolean } = {}): Promise<void> {
  const who = keyAgentOf(agent);
  const held = await deps.client.get<SecretObject>(keySecretRef(agent));
  const owned = held && ownedByAgent(held, who) ? held : undefined;
  const recorded = owned ? agentKeyStateOf(owned.metadata.annotations, who.namespace).model : undefined;
  const models = [recorded, bound].filter((m, i, all): m is ModelRef => !!m && !all.slice(0, i).some((o) => sameModel(o, m)));
  for (const model of models) await revokeAgentKeysOn(deps, agent, model, reason);
  if (opts.deleteSecret && owned) await deps.client.delete(keySecretRef(agent), { preconditions: { uid: owned.metadata.uid } });
}
