// How cluster commands find their kubeconfig, and what they say when there is none.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { kubeConfigFrom, missingKubeconfig } from '../../../src/cli/kubeconfig';
import { UsageError } from '../../../src/cli/phases';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-kubeconfig-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const kubeconfig = path.join(dir, 'config');
fs.writeFileSync(
  kubeconfig,
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:6443' } }],
    users: [{ name: 'u', user: { token: 't' } }],
    contexts: [{ name: 'dev', context: { cluster: 'c', user: 'u' } }, { name: 'prod', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'dev',
  }),
);

test('no $KUBECONFIG, no ~/.kube/config and not in a pod: the message says where it looked and what to pass', () => {
  expect(missingKubeconfig({}, path.join(dir, 'home'), path.join(dir, 'no-token'))).toBe(`no kubeconfig found (checked $KUBECONFIG, ${path.join(dir, 'home', '.kube', 'config')}, in-cluster); use --kubeconfig`);
  expect(missingKubeconfig({ KUBECONFIG: path.join(dir, 'gone') }, dir)).toBe(`no kubeconfig found (checked $KUBECONFIG (${path.join(dir, 'gone')})); use --kubeconfig`);
  expect(missingKubeconfig({ KUBECONFIG: kubeconfig }, dir)).toBeUndefined();
});

test('--context picks a context; an unknown one or a missing --kubeconfig file is a usage error naming the flag', () => {
  expect(kubeConfigFrom(kubeconfig, 'prod').getCurrentContext()).toBe('prod');
  expect(() => kubeConfigFrom(kubeconfig, 'staging')).toThrow(new UsageError('--context staging is not in the kubeconfig; its contexts: dev, prod'));
  expect(() => kubeConfigFrom(path.join(dir, 'nope'))).toThrow(UsageError);
});
