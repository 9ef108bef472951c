// What the end-to-end global setup made, handed to the test files through one variable.
import type { E2eImages } from './images';

export interface E2eState {
  readonly dir: string;
  /** `oci://<registry>/charts`; holds `nebari-llm-serving` at `version` and `next`. */
  readonly chartRepo: string;
  readonly images: E2eImages;
  readonly version: string;
  readonly next: string;
  readonly auditLog: string;
  readonly nodeDir: string;
  readonly planeDir: string;
}

export const e2eStateVariable = 'NLS_E2E_STATE';

/** The version the upgrade moves to: the same build, as the next patch release. */
export function nextVersion(version: string): string {
  const [major, minor, patch] = version.replace(/-.*$/, '').split('.').map(Number);
  return `${major}.${minor}.${patch + 1}-e2e`;
}

export function e2eState(): E2eState {
  const raw = process.env[e2eStateVariable];
  if (!raw) throw new Error(`${e2eStateVariable} is not set: end-to-end tests run under the jest project "e2e", whose global setup starts the node`);
  return JSON.parse(raw) as E2eState;
}
