// What an offline admission concludes about one object, in the API server's terms.

/**
 * Which stage refused the object: an admission stage, or `provider` for an admitted LLMModel its
 * provider's translation refuses (in the cluster: admitted, then BuildFailed).
 */
export type ProblemSource = 'metadata' | 'schema' | 'cel' | 'webhook' | 'provider';

export interface Problem {
  /** The field the API server would name, e.g. `spec.provider.port`; empty for the whole object. */
  readonly field: string;
  /** The cause as the API server words it (`Invalid value: ...`, `Required value`, the rule's message). */
  readonly message: string;
  readonly source: ProblemSource;
}

export interface AdmissionResult {
  readonly admitted: boolean;
  /** The object as it would be stored: schema defaults, webhook defaults, unknown fields dropped. */
  readonly object: Record<string, unknown>;
  readonly problems: readonly Problem[];
  /** Warnings the client would see (webhook warnings and `unknown field "..."`). */
  readonly warnings: readonly string[];
  /** Paths of fields the schema does not declare (the API server prunes them). */
  readonly unknownFields: readonly string[];
}

/** `field: message`, the way `kubectl` prints one cause. */
export function describeProblem(problem: Problem): string {
  if (problem.source === 'webhook' || problem.source === 'provider' || !problem.field) return problem.message;
  return `${problem.field}: ${problem.message}`;
}
