// The claimed Kubernetes minors (src/kubernetes-versions.ts) are the ones CI runs: tools/kube pins
// the newest, a tools/kube-<minor> module builds each older one for the version matrix, and the
// chart, docs and tools say the same range.
import * as fs from 'fs';
import * as path from 'path';
import { parse } from 'yaml';
import { KUBERNETES_MINORS, NEWEST_KUBERNETES_MINOR, OLDEST_KUBERNETES_MINOR } from '../../src/kubernetes-versions';

const root = path.resolve(__dirname, '..', '..');

/** The k8s.io/kubernetes version a tools/ module pins. */
function pinnedKubernetes(dir: string): string {
  const goMod = fs.readFileSync(path.join(root, 'tools', dir, 'go.mod'), 'utf8');
  // `require k8s.io/kubernetes vX` on its own line, or inside a require block (as go mod tidy writes it).
  return /^(?:require)?\s*k8s\.io\/kubernetes (v\d+\.\d+\.\d+)/m.exec(goMod)![1];
}

test('tools/kube pins the newest claimed minor', () => {
  expect(pinnedKubernetes('kube')).toMatch(new RegExp(`^v${NEWEST_KUBERNETES_MINOR.replace('.', '\\.')}\\.`));
});

test('a tools/kube-<minor> module pins each older claimed minor, and no other', () => {
  const modules = fs.readdirSync(path.join(root, 'tools')).filter((d) => d.startsWith('kube-')).sort();
  expect(modules).toEqual(KUBERNETES_MINORS.filter((m) => m !== NEWEST_KUBERNETES_MINOR).map((m) => `kube-${m}`));
  for (const dir of modules) expect(pinnedKubernetes(dir)).toMatch(new RegExp(`^v${dir.slice('kube-'.length).replace('.', '\\.')}\\.`));
});

test('an older minor builds only its API server (the version matrix runs in apiserver mode)', () => {
  for (const minor of KUBERNETES_MINORS.filter((m) => m !== NEWEST_KUBERNETES_MINOR)) {
    const goMod = fs.readFileSync(path.join(root, 'tools', `kube-${minor}`, 'go.mod'), 'utf8');
    expect(goMod).toMatch(/^tool k8s\.io\/kubernetes\/cmd\/kube-apiserver$/m);
  }
});

test('the chart, the compatibility matrix and the installation guide state the same range', () => {
  const chart = parse(fs.readFileSync(path.join(root, 'charts', 'nebari-llm-serving', 'Chart.yaml'), 'utf8')) as { kubeVersion: string };
  expect(chart.kubeVersion).toBe(`>=${OLDEST_KUBERNETES_MINOR}.0-0`);
  const range = `${OLDEST_KUBERNETES_MINOR}–${NEWEST_KUBERNETES_MINOR}`;
  const row = fs.readFileSync(path.join(root, 'docs', 'compatibility.md'), 'utf8').split('\n').find((l) => l.startsWith('| 0.2.x'))!;
  expect(row).toContain(`| ${range} (`);
  expect(fs.readFileSync(path.join(root, 'docs', 'installation.md'), 'utf8')).toContain(`Kubernetes ${range}`);
});
