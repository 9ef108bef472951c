// Status conditions in the standard metav1.Condition shape, with observedGeneration.

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface Condition {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
  observedGeneration?: number;
  lastTransitionTime: string;
}

export interface ConditionInput {
  type: string;
  status: ConditionStatus | boolean;
  reason: string;
  message?: string;
}

// Condition messages are bounded by the CRD (32768) and must stay readable.
const maxMessage = 1024;

/**
 * The new condition list: `inputs` replace conditions of the same type; lastTransitionTime only
 * moves when the status changes, so re-reconciling does not churn status.
 */
export function mergeConditions(existing: Condition[] | undefined, inputs: ConditionInput[], generation: number | undefined, now: Date = new Date()): Condition[] {
  const stored = new Map((existing ?? []).map((c) => [c.type, c]));
  const byType = new Map(stored);
  for (const input of inputs) {
    const status: ConditionStatus = typeof input.status === 'boolean' ? (input.status ? 'True' : 'False') : input.status;
    // Compared with what is stored, so a type given twice in one call moves the time only if
    // its final status differs from the stored one.
    const prior = stored.get(input.type);
    byType.set(input.type, {
      type: input.type,
      status,
      reason: input.reason,
      message: (input.message ?? '').slice(0, maxMessage),
      observedGeneration: generation,
      lastTransitionTime: prior && prior.status === status ? prior.lastTransitionTime : now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    });
  }
  return [...byType.values()];
}

export function findCondition(conditions: Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

export function isConditionTrue(conditions: Condition[] | undefined, type: string): boolean {
  return findCondition(conditions, type)?.status === 'True';
}
