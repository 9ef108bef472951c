// `nls verify --images` on facts (the integration test reads them from a real API server).
import { type ImageFacts, chartVersionOfLabel, imageChecks, imageDigest, imageTag } from '../../../src/cli/lifecycle/verify-images';
import { runVerify } from '../../../src/cli/lifecycle/verify';

const A = `sha256:${'a'.repeat(64)}`;
const B = `sha256:${'b'.repeat(64)}`;
const labels = { 'helm.sh/chart': 'nebari-llm-serving-0.3.0', 'app.kubernetes.io/version': '0.3.0' };
const facts = (over: Partial<ImageFacts> = {}): ImageFacts => ({
  deployment: 'llm/nls-operator',
  labels,
  image: `registry.example.com/nebari/nebari-llm-serving:0.3.0@${A}`,
  pods: [
    { name: 'p1', image: `registry.example.com/nebari/nebari-llm-serving:0.3.0@${A}`, imageID: `registry.example.com/nebari/nebari-llm-serving@${A}` },
    { name: 'p2', image: `registry.example.com/nebari/nebari-llm-serving:0.3.0@${A}`, imageID: `docker-pullable://registry.example.com/nebari/nebari-llm-serving@${A}` },
  ],
  ...over,
});
const result = (f: ImageFacts) => Object.fromEntries(imageChecks(f).map((c) => [c.check, `${c.result}: ${c.detail}`]));

test('references: digest, tag, chart label', () => {
  expect(imageDigest(`r:5000/x:1@${A}`)).toBe(A);
  expect(imageDigest('sha256:abc')).toBeUndefined();
  expect(imageTag('127.0.0.1:5000/x')).toBeUndefined();
  expect(imageTag(`127.0.0.1:5000/x:0.3.0@${A}`)).toBe('0.3.0');
  expect(chartVersionOfLabel('nebari-llm-serving-0.3.0-rc.1_build.5')).toBe('0.3.0-rc.1+build.5');
  expect(chartVersionOfLabel('other-1.0.0')).toBeUndefined();
});

test('pods on the digest the values name pass', () => {
  expect(result(facts())).toEqual({
    'release version': 'pass: Deployment llm/nls-operator is chart nebari-llm-serving 0.3.0, appVersion 0.3.0',
    'operator image': `pass: the chart values name registry.example.com/nebari/nebari-llm-serving:0.3.0@${A} (pinned by digest)`,
    'operator pod images': `pass: 2 pod(s) run ${A}, the digest the chart values name`,
    'released image': 'pass: the chart records no released image (llm.nebari.dev/released-operator-image): a chart built from a checkout, not a release; nothing to compare',
  });
});

test('the running image must be the one the chart was released with: values that override operator.image fail', () => {
  const released = `registry.example.com/nebari/nebari-llm-serving@${A}`;
  expect(result(facts({ releasedImage: released }))['released image']).toBe(`pass: the Deployment names the image the chart was released with (${A})`);
  // A mirror of the same digest is the released image.
  const mirrored = `mirror.example.com/nls:0.3.0@${A}`;
  expect(result(facts({ releasedImage: released, image: mirrored, pods: facts().pods.map((p) => ({ ...p, image: mirrored })) }))['released image']).toMatch(/^pass/);
  // What an old custom build's values.yaml did: the checkout's repository and tag, no digest.
  const unpinned = 'nebari/nebari-llm-serving:0.3.0';
  const byTag = result(facts({ releasedImage: released, image: unpinned, pods: facts().pods.map((p) => ({ ...p, image: unpinned })) }));
  expect(byTag['operator image']).toMatch(/^pass/);
  expect(byTag['released image']).toBe(
    `fail: the chart was released with ${released}, but the Deployment names ${unpinned}: your values override operator.image (a custom build's values.yaml from before 0.2.0 wrote the checkout's operator.image with an empty digest); remove operator.image from the values, or set operator.image.digest to ${A}, then upgrade and verify again`,
  );
  expect(result(facts({ releasedImage: `registry.example.com/nebari/nebari-llm-serving@${B}` }))['released image']).toMatch(/^fail: the chart was released with .*@sha256:b+, but the Deployment names/);
});

test('disagreements are named with what to do', () => {
  const pods = facts().pods;
  expect(result(facts({ pods: [pods[0], { ...pods[1], imageID: `x@${B}` }] }))['operator pod images']).toMatch(new RegExp(`^fail: .*${A} \\(p1\\); ${B} \\(p2\\); .*pin operator.image.digest`));
  expect(result(facts({ image: 'r/nls:0.3.0', pods: pods.map((p) => ({ ...p, image: 'r/nls:0.3.0' })) }))['operator pod images']).toBe(`pass: 2 pod(s) run ${A}`);
  expect(result(facts({ pods: [{ ...pods[0], image: 'r/nls:0.2.0' }] }))['operator pod images']).toMatch(/^fail: p1 runs r\/nls:0\.2\.0, but the Deployment names .*the rollout has not finished; wait \(kubectl rollout status deployment\/nls-operator\)/);
  expect(result(facts({ pods: [{ ...pods[0], imageID: '' }] }))['operator pod images']).toMatch(/^fail: p1 report no image digest yet/);
  expect(result(facts({ pods: [] }))['operator pod images']).toMatch(/^fail: no running pods/);
  expect(result(facts({ image: `r/nls:0.3.0@${B}`, pods: pods.map((p) => ({ ...p, image: `r/nls:0.3.0@${B}` })) }))['operator pod images']).toMatch(new RegExp(`^fail: the pods run ${A}, but the chart values name ${B}`));
  expect(result(facts({ image: 'r/nls:0.2.9', pods: [] }))['operator image']).toMatch(/^fail: the chart values name r\/nls:0\.2\.9, but the chart's appVersion is 0\.3\.0/);
  expect(result(facts({ labels: {} }))['release version']).toMatch(/^fail: .*has no helm\.sh\/chart or app\.kubernetes\.io\/version label/);
});

test('the Argo CD Application: the chart source must target the running version and be synced to it', () => {
  const app = (targetRevision: string, synced: string[] = []) => ({ name: 'argocd/llm', sources: [{ repoURL: 'oci://r/charts', chart: 'nebari-llm-serving', targetRevision }], syncedRevisions: synced });
  expect(result(facts({ application: app('0.3.0', ['0.3.0']) }))['Argo CD target revision']).toBe('pass: Application argocd/llm targets nebari-llm-serving 0.3.0, the version running');
  expect(result(facts({ application: app('0.4.0') }))['Argo CD target revision']).toMatch(/^fail: Application argocd\/llm wants nebari-llm-serving 0\.4\.0, but the cluster runs 0\.3\.0: sync the Application/);
  expect(result(facts({ application: app('0.3.0', ['0.2.0']) }))['Argo CD target revision']).toBe('fail: Application argocd/llm targets 0.3.0 but last synced 0.2.0; sync it and verify again');
  expect(result(facts({ application: { name: 'argocd/llm', sources: [{ repoURL: 'https://git.example.com/x.git', targetRevision: 'main' }], syncedRevisions: [] } }))['Argo CD target revision']).toMatch(/^fail: .*has no source with chart nebari-llm-serving/);
  expect(result(facts({ application: null, applicationRef: 'argocd/none' }))['Argo CD target revision']).toMatch(/^fail: Application argocd\/none not found/);
  expect(result(facts())['Argo CD target revision']).toBeUndefined();
});

test('--argocd-application must be NAMESPACE/NAME', async () => {
  const out: string[] = [];
  expect(await runVerify(['--argocd-application', 'llm'], (l) => out.push(l))).toBe(2);
  expect(out.join('\n')).toContain('--argocd-application "llm" is not NAMESPACE/NAME');
});
