// Translation problems are values, not exceptions: the operator turns them into status
// conditions and the webhook into admission messages, so each one names the field and the fix.

/** One reason a model cannot be translated into gateway objects. */
export interface TranslationError {
  /** Path of the offending field, e.g. `spec.provider.hostname` (or the chart value `platform.…` for cluster settings). */
  readonly field: string;
  /** A complete sentence for the user, starting with the field path and ending with the fix. */
  readonly message: string;
}

/** Builds an error whose message starts with the field path, as every user-facing error does. */
export function translationError(field: string, problem: string): TranslationError {
  return { field, message: `${field}: ${problem}` };
}

/** Either a value or the errors that prevented it. */
export type Result<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly errors: readonly TranslationError[] };

export function ok<T>(value: T): Result<T> {
  return { ok: true, value };
}

export function failed<T>(...errors: TranslationError[]): Result<T> {
  return { ok: false, errors };
}
