// The Kubernetes minor a run is on: the newest (tools/kube) in the integration suite, each older
// claimed minor in the version matrix (scripts/test-kube-versions.sh sets NLS_KUBE_MINOR and runs
// this file with the CRD, admission, gateway and chart files). It proves the run really is on that
// minor, and that the chart's kubeVersion admits every claimed minor and refuses the one below.
import { chartDir } from './chart-support';
import { helm, rest } from '../support/cluster';
import { kubeMinor } from '../support/tools';
import { KUBERNETES_MINORS, OLDEST_KUBERNETES_MINOR } from '../../src/kubernetes-versions';
import { KUBE_VERSION } from '../../src/chart/chart-yaml';

interface ServerVersion {
  gitVersion: string;
  major: string;
  minor: string;
}

let server: ServerVersion;

beforeAll(async () => {
  server = await rest().request<ServerVersion>('GET', '/version');
});

test('the API server is the Kubernetes minor under test', () => {
  expect(`${server.major}.${server.minor}`).toBe(kubeMinor());
  expect(server.gitVersion).toMatch(new RegExp(`^v${kubeMinor().replace('.', '\\.')}\\.\\d+$`));
});

test.each([3, 4] as const)('helm %i renders the chart for this API server\'s version', async (version) => {
  const r = await helm(version, ['template', 'nls', chartDir, '--kube-version', server.gitVersion]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(r.stdout).toContain('kind: Deployment');
});

test.each([3, 4] as const)('helm %i refuses the minor below the oldest claimed one, naming the constraint', async (version) => {
  const [major, minor] = OLDEST_KUBERNETES_MINOR.split('.').map(Number);
  const r = await helm(version, ['template', 'nls', chartDir, '--kube-version', `v${major}.${minor - 1}.0`]);
  expect(r.code).not.toBe(0);
  expect(r.stderr).toContain(KUBE_VERSION);
});

test('the claimed minors are consecutive, oldest first', () => {
  const minors = KUBERNETES_MINORS.map((m) => Number(m.split('.')[1]));
  expect(minors).toEqual(minors.map((_, i) => minors[0] + i));
});
