// The CRD safety rules of `nls crds apply`, on CRD objects as the API server returns them.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { crdObjects } from '../../../src/api/kinds';
import { type CrdObject, crdChangeProblems, needsConversionFirst, readCrdDirectory, runCrds, runCrdsApply } from '../../../src/cli/lifecycle/crds';

const crd = (versions: { name: string; served: boolean; storage: boolean }[], extra: Partial<CrdObject['spec']> = {}, storedVersions?: string[]): CrdObject => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'llmmodels.llm.nebari.dev' },
  spec: { group: 'llm.nebari.dev', scope: 'Namespaced', names: { kind: 'LLMModel', plural: 'llmmodels' }, versions, ...extra },
  status: storedVersions ? { storedVersions } : undefined,
});

const v1alpha1 = { name: 'v1alpha1', served: true, storage: true };
const v1beta1 = { name: 'v1beta1', served: true, storage: true };

describe('crdChangeProblems', () => {
  const none = () => false;
  const some = () => true;

  test('a new CRD or an added field/version is safe', () => {
    expect(crdChangeProblems(undefined, crd([v1alpha1]), some)).toEqual([]);
    expect(crdChangeProblems(crd([v1alpha1], {}, ['v1alpha1']), crd([{ ...v1alpha1, storage: false }, v1beta1]), some)).toEqual([]);
  });

  test.each([
    ['drops a stored version', crd([v1alpha1], {}, ['v1alpha1']), crd([v1beta1]), none, /version v1alpha1 is listed in status.storedVersions but the new CRD drops it; migrate the stored objects to v1beta1 and remove v1alpha1 from storedVersions first: nls storage migrate --crd llmmodels\.llm\.nebari\.dev$/],
    ['drops a served version that has objects', crd([v1alpha1, { ...v1beta1, storage: false }], {}, ['v1alpha1']), crd([{ ...v1alpha1 }]), some, /version v1beta1 has objects but the new CRD drops it; migrate them to v1alpha1 first: nls storage migrate --crd llmmodels\.llm\.nebari\.dev$/],
    ['stops serving a version that has objects', crd([v1alpha1], {}, []), crd([{ ...v1alpha1, served: false }]), some, /version v1alpha1 has objects but the new CRD stops serving it/],
    ['changes the scope', crd([v1alpha1]), crd([v1alpha1], { scope: 'Cluster' }), none, /spec.scope would change from Namespaced to Cluster/],
    ['changes the group', crd([v1alpha1]), crd([v1alpha1], { group: 'llm.example.com' }), none, /spec.group would change/],
    ['changes the kind', crd([v1alpha1]), crd([v1alpha1], { names: { kind: 'Model', plural: 'llmmodels' } }), none, /spec.names.kind would change from LLMModel to Model/],
  ])('refuses a CRD that %s', (_name, live, desired, exists, message) => {
    const problems = crdChangeProblems(live, desired, exists);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(message);
    expect(problems[0]).toMatch(/^llmmodels\.llm\.nebari\.dev: /);
  });

  test('stopping to serve an empty, unstored version is allowed', () => {
    expect(crdChangeProblems(crd([v1alpha1, { ...v1beta1, storage: false }], {}, ['v1alpha1']), crd([v1alpha1]), none)).toEqual([]);
  });
});

describe('needsConversionFirst', () => {
  const desired = () => structuredClone(crdObjects()[0]) as unknown as CrdObject;
  /** The same CRD as a v1alpha1-only release shipped it. */
  const alphaOnly = () => {
    const crd = desired();
    crd.spec.versions = crd.spec.versions.filter((v) => v.name === 'v1alpha1').map((v) => ({ ...v, storage: true }));
    return crd;
  };

  it('is needed when an installed single-version CRD without a webhook gains versions and changes storage', () => {
    expect(needsConversionFirst(alphaOnly(), desired())).toBe(true);
  });

  it('is not needed for a new CRD, one that already converts through a webhook, or a single-version target', () => {
    expect(needsConversionFirst(undefined, desired())).toBe(false);
    const wired = { ...alphaOnly(), spec: { ...alphaOnly().spec, conversion: { strategy: 'Webhook' } } } as unknown as CrdObject;
    expect(needsConversionFirst(wired, desired())).toBe(false);
    expect(needsConversionFirst(alphaOnly(), alphaOnly())).toBe(false);
    expect(needsConversionFirst(desired(), desired())).toBe(false);
  });
});

describe('readCrdDirectory', () => {
  test('reads every CRD of a crds/ directory, ignoring other documents', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-crds-'));
    fs.writeFileSync(path.join(dir, 'b.yaml'), '# comment\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n---\n' + JSON.stringify(crd([v1alpha1])));
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'not yaml');
    expect(readCrdDirectory(dir).map((c) => c.metadata.name)).toEqual(['llmmodels.llm.nebari.dev']);
    fs.rmSync(dir, { recursive: true });
  });

  test('the committed chart holds exactly the CRDs built into nls', () => {
    const dir = path.resolve(__dirname, '../../../charts/nebari-llm-serving/crds');
    expect(readCrdDirectory(dir).map((c) => c.metadata.name).sort()).toEqual(crdObjects().map((c) => (c.metadata as { name: string }).name).sort());
  });

  test('a directory without CRDs is refused naming it', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-crds-'));
    expect(() => readCrdDirectory(dir)).toThrow(`no CustomResourceDefinition in ${dir}`);
    fs.rmSync(dir, { recursive: true });
  });
});

describe('nls crds apply arguments', () => {
  test('--dry-run prints the plan without contacting anything', async () => {
    const lines: string[] = [];
    expect(await runCrdsApply(['--dry-run'], (l) => lines.push(l))).toBe(0);
    expect(lines).toContain('1. crds-check: read the target CRDs and check the change is safe (check, changes nothing)');
    expect(lines).toContain('     - read crds/ of the CRDs built into this nls');
    expect(lines).toContain('     waits for: each CRD to be Established, one at a time, stopping at the first failure');
  });

  test('bad arguments exit 2 with the reason', async () => {
    const lines: string[] = [];
    expect(await runCrds(['remove'], (l) => lines.push(l))).toBe(2);
    expect(lines[0]).toMatch(/unknown action "remove"; the only action is apply/);
    expect(await runCrdsApply(['--version', '0.2.0'], (l) => lines.push(l))).toBe(2);
    expect(lines.at(-1)).toBe('error: crds apply: --version needs --chart (which chart to take the version of)');
  });
});
