// What a validation rule set concludes about one request: the reasons to deny (each naming the
// field and the fix) and warnings the client sees even when the request is allowed.

export interface Verdict {
  readonly denials: readonly string[];
  readonly warnings: readonly string[];
  /** HTTP status the API server returns to the client on denial. @default 422 */
  readonly code?: number;
}

/** Collects findings while rules run, then freezes them into a Verdict. */
export class Findings {
  private readonly denied: string[] = [];
  private readonly warned: string[] = [];
  private status = 422;

  /** Records a reason to deny; `code` raises the status (403 for authorization, 503 for lookups). */
  deny(message: string, code?: number): void {
    this.denied.push(message);
    if (code !== undefined && (this.status === 422 || code === 403)) this.status = code;
  }

  warn(message: string): void {
    this.warned.push(message);
  }

  get denials(): readonly string[] {
    return this.denied;
  }

  verdict(): Verdict {
    return { denials: [...this.denied], warnings: [...this.warned], code: this.status };
  }
}

/** One message for the client: a single reason as is, several as a bracketed list. */
export function denialMessage(denials: readonly string[]): string {
  return denials.length === 1 ? denials[0] : `[${denials.join(', ')}]`;
}

/** A lookup failure turned into a fail-closed denial that says what could not be checked. */
export function lookupFailed(what: string, error: unknown): string {
  const detail = error instanceof Error ? error.message : String(error);
  return `could not check ${what} (${detail}); the request is refused until the check succeeds, retry shortly`;
}
