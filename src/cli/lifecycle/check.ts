// One row of `nls verify`'s table, shared by the modules that contribute checks.

export type CheckResult = 'pass' | 'fail' | 'skip';

export interface Check {
  readonly check: string;
  readonly result: CheckResult;
  readonly detail: string;
}
