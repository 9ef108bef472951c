// Revocation without a human: on every reconcile of a model, the operator removes its expired
// keys and the keys its access no longer grants (src/translate/keys/revocation.ts decides which),
// records each in the audit log, as an Event on the model and as a log line (client ID and owner,
// never the key), and asks to be requeued at the next expiry.
import { ApiKeyRecord, ModelRef, parseApiKeyRecord } from '../translate/keys/api-keys';
import { KeyRevocation, keysToRevoke, nextExpiry } from '../translate/keys/revocation';
import type { ModelWithAccess } from '../translate/keys/access';
import { revokeKey } from '../api-keys/key-store';
import type { ReconcileDeps } from './reconcile-context';
import type { KubeObject } from '../kube/rest';

/** The audit actor of the operator's revocations. */
export const OPERATOR_ACTOR = 'operator';
/** Requeue no later than this for a far expiry (a resync would catch it too; timers this long drift). */
const MAX_EXPIRY_WAIT_MS = 60 * 60_000;
/** Past the expiry, so the next pass sees the key as expired. */
const EXPIRY_SLACK_MS = 50;

const eventReason: Record<KeyRevocation['action'], string> = { expire: 'ApiKeyExpired', 'access-revoked': 'ApiKeyAccessRevoked' };

export interface KeyRevocationOutcome {
  /** Client IDs that must no longer be authorized (revoked now, or due but the removal failed). */
  revoked: Set<string>;
  /** Delay until the next key expires, if any. */
  requeueAfterMs?: number;
}

/**
 * Revoke the model's due keys, given its key Secret's client IDs and metadata ConfigMap data as read. A removal
 * that fails is logged and retried on the next pass; the key is left out of the SecurityPolicy
 * meanwhile, so it stops working either way.
 */
export async function revokeDueKeys(
  deps: ReconcileDeps,
  model: KubeObject & ModelWithAccess,
  ref: ModelRef,
  clientIds: readonly string[],
  metadataData: Record<string, string> | undefined,
  now: Date = new Date(),
): Promise<KeyRevocationOutcome> {
  const records = clientIds.map((id) => parseApiKeyRecord(id, metadataData?.[id]));
  const due = keysToRevoke(model, records, now);
  const byId = new Map<string, ApiKeyRecord>(records.map((r) => [r.clientId, r]));
  let retrySoon = false;
  for (const r of due) {
    const owner = byId.get(r.clientId)?.createdBy ?? 'unknown';
    try {
      const removed = await revokeKey(deps.client, ref, r.clientId, { actor: OPERATOR_ACTOR, reason: r.reason, action: r.action, waitMs: 10_000 });
      if (!removed) continue; // someone revoked it meanwhile, and recorded that
      const what = r.action === 'expire' ? 'expired' : 'access revoked';
      deps.log.info(`API key ${what}; removed`, { clientId: r.clientId, owner, reason: r.reason });
      await deps.events.record(model, r.action === 'expire' ? 'Normal' : 'Warning', eventReason[r.action], `API key ${r.clientId} of ${owner} removed: ${r.reason}`);
    } catch (err) {
      retrySoon = true;
      deps.log.warn('could not remove a due API key; it is left out of the auth policy and retried', { clientId: r.clientId, owner, err });
    }
  }
  const next = nextExpiry(records, now);
  const untilNext = next ? Math.min(MAX_EXPIRY_WAIT_MS, next.getTime() - now.getTime() + EXPIRY_SLACK_MS) : undefined;
  const waits = [untilNext, retrySoon ? 10_000 : undefined].filter((n): n is number => n !== undefined);
  return { revoked: new Set(due.map((r) => r.clientId)), ...(waits.length ? { requeueAfterMs: Math.min(...waits) } : {}) };
}
