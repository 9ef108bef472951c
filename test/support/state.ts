// What global setup started, handed to the test workers through one environment variable.
export interface SharedState {
  readonly kubeconfigPath: string;
  readonly server: string;
  readonly registryAddress: string;
  readonly mode: 'apiserver' | 'cluster' | 'node';
  readonly users: { name: string; token: string }[];
  readonly helmHome: string;
}

export const stateVariable = 'NLS_TEST_STATE';

export function readSharedState(): SharedState {
  const raw = process.env[stateVariable];
  if (!raw) {
    throw new Error(`${stateVariable} is not set: integration tests run under the jest project "integration", whose global setup starts the control plane`);
  }
  return JSON.parse(raw) as SharedState;
}
