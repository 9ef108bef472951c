// `nls upgrade`, `nls rollback`, `nls verify` against a real control plane in cluster mode (a
// private one: the chart's webhooks match every namespace), real helm 4 and a real OCI registry.
// The operator pods are kwok's (Ready, no process), so the webhook servers of src/webhook run in
// this process as the "old" (0.2.0) and "new" (0.2.1-test) operator; each chart version's webhook
// configurations call its own server by URL (see cli-upgrade-support.ts). The upgrade guard is
// the committed chart's: Service-based, failing closed.
//
// What each test proves:
// - unpublished: a version missing from the registry is refused (exit 3) before anything changes
//   (same release revision, no guard, CRDs untouched).
// - N→N+1: 0.2.0 -> 0.4.0 (a published chart skipping 0.3) is refused in the check phase (exit 3),
//   naming the 0.3 line, before anything changes (same release revision, CRDs and webhook
//   configurations untouched, no guard); with --allow-skip the check only warns and the run goes
//   on to the next phase (stopped there by a CRD change crds-check refuses, so still nothing
//   changes); a downgrade to 0.1.0 is refused pointing to nls rollback --to.
// - upgrade: 0.2.0 -> 0.2.1-test with 200 models and agents; a rollout that cannot complete
//   (every node cordoned) fails phase two; then the guard is in place, AgentDeployment writes are
//   denied, LLMModel/PassthroughModel writes work, verify fails on the guard; `--resume-from
//   controller` completes. Throughout, an observer's writes were admitted by the old validator,
//   then denied by the guard, then admitted by the new one — never mixed, never unvalidated.
//   Nothing lost (same uids and specs); the new CRD field is accepted; verify passes.
// - rollback: back to 0.2.0 with helm failing in phase three (activate); same guarantees;
//   `--resume-from activate` completes; observer sees new -> guard -> old.
// - upgrade again, with helm 3, helm failing in phase three; resume; observer old -> guard -> new.
// - crds apply: a CRD set that drops the stored version, or that the API server rejects, is
//   refused (exit 3) before any CRD is written.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import { parseDocument } from 'yaml';
import { type ControlPlane, helm, registryAddress, startControlPlane } from '../support/cluster';
import { freePort, waitFor } from '../support/processes';
import { toolPaths } from '../support/tools';
import { KubeRest } from '../../src/kube/rest';
import { runCrdsApply } from '../../src/cli/lifecycle/crds';
import { runRollback } from '../../src/cli/lifecycle/rollback';
import { runUpgrade } from '../../src/cli/lifecycle/upgrade';
import { runVerify } from '../../src/cli/lifecycle/verify';
import { observeRollout } from '../../src/cli/lifecycle/wait';
import { AgentWriter, CHART, GUARD_WEBHOOK, type LookupLog, NEW_FIELD, type OperatorStandIn, fixtures, outcomeSequence, startOperatorStandIn, wiredChart } from './cli-upgrade-support';

const OLD = '0.2.0';
const NEW = '0.2.1-test';
const RELEASE = CHART;
const NS = 'nls-lifecycle';
const GUARD = `${RELEASE}-agentdeployment-guard`;

let plane: ControlPlane;
let kc: k8s.KubeConfig;
let rest: KubeRest;
let repo: string;
/** Wrappers around helm 4 and helm 3 that fail every upgrade turning the AgentDeployment routes on. */
const failingHelm: Record<3 | 4, string> = { 3: '', 4: '' };
const lookups: LookupLog = new Map();
const standIns: OperatorStandIn[] = [];
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-cli-upgrade-'));
const transcript: string[] = [];

/** Runs a CLI entry with its output captured; returns exit code and output. */
async function cli(run: (args: string[], out: (l: string) => void) => Promise<number>, args: string[], helmBinary = toolPaths().helm4): Promise<{ code: number; output: string }> {
  process.env.NLS_HELM = helmBinary;
  const lines: string[] = [];
  const code = await run([...args, '--kubeconfig', plane.kubeconfigPath], (l) => lines.push(l));
  const command = run.name.replace(/^run/, '').toLowerCase();
  transcript.push(`$ NLS_HELM=${path.basename(helmBinary)} nls ${command} ${args.join(' ')} -> ${code}`, ...lines);
  return { code, output: lines.join('\n') };
}

const chartRef = () => `${repo}/${CHART}`;
const common = () => ['--chart', chartRef(), '--plain-http', '--release', RELEASE, '--namespace', NS];

async function helmOk(args: string[]): Promise<string> {
  const r = await helm(4, args, { kubeconfig: plane.kubeconfigPath });
  if (r.code !== 0) throw new Error(`helm ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

async function history(): Promise<{ revision: number; chart: string; status: string }[]> {
  return JSON.parse(await helmOk(['history', RELEASE, '-n', NS, '-o', 'json']));
}

type Snapshot = Map<string, { uid: string; spec: unknown }>;

async function snapshot(): Promise<Snapshot> {
  const out: Snapshot = new Map();
  for (const kind of ['LLMModel', 'PassthroughModel', 'AgentDeployment']) {
    const list = await rest.list('llm.nebari.dev/v1alpha1', kind, { namespace: NS, labelSelector: 'nls-test/set=baseline' });
    for (const o of list.items) out.set(`${kind}/${o.metadata.name}`, { uid: String((o.metadata as { uid: string }).uid), spec: (o as unknown as { spec: unknown }).spec });
  }
  return out;
}

async function guardExists(): Promise<boolean> {
  return !!(await rest.get({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: GUARD } }));
}

/** resourceVersions of the CRDs and the release's webhook configurations, and whether the guard exists. */
async function clusterObjects(): Promise<Record<string, string | boolean>> {
  const refs = [
    ...['agentdeployments', 'llmmodels', 'passthroughmodels'].map((p) => ({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `${p}.llm.nebari.dev` } })),
    { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: `${RELEASE}-validating` } },
    { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: `${RELEASE}-mutating` } },
  ];
  const out: Record<string, string | boolean> = {};
  for (const ref of refs) {
    const o = await rest.get(ref);
    if (!o) throw new Error(`${ref.kind} ${ref.metadata.name} is missing`);
    out[`${ref.kind}/${ref.metadata.name}`] = (o.metadata as { resourceVersion: string }).resourceVersion;
  }
  out.guard = await guardExists();
  return out;
}

async function setNodesSchedulable(schedulable: boolean): Promise<void> {
  const nodes = await rest.list('v1', 'Node', { labelSelector: 'type=kwok' });
  for (const n of nodes.items) await rest.mergePatch({ apiVersion: 'v1', kind: 'Node', metadata: { name: n.metadata.name } }, { spec: { unschedulable: !schedulable } });
}

/** While the guard is in place: AgentDeployment CREATE/UPDATE denied by it, model writes admitted. */
async function expectGuardedState(tag: string): Promise<void> {
  expect(await guardExists()).toBe(true);
  await expect(rest.create(fixtures.agent(`guarded-${tag}`, NS))).rejects.toThrow(GUARD_WEBHOOK);
  await expect(rest.mergePatch({ apiVersion: 'llm.nebari.dev/v1alpha1', kind: 'AgentDeployment', metadata: { name: 'agent-00', namespace: NS } }, { spec: { replicas: 2 } })).rejects.toThrow(GUARD_WEBHOOK);
  await expect(rest.create(fixtures.llmModel(`during-${tag}`, NS))).resolves.toMatchObject({ metadata: { name: `during-${tag}` } });
  await expect(rest.create(fixtures.passthroughModel(`during-${tag}-provider`, NS))).resolves.toMatchObject({ metadata: { name: `during-${tag}-provider` } });
  await expect(rest.mergePatch({ apiVersion: 'llm.nebari.dev/v1alpha1', kind: 'LLMModel', metadata: { name: `during-${tag}`, namespace: NS } }, { spec: { serving: { replicas: 2 } } })).resolves.toMatchObject({ spec: { serving: { replicas: 2 } } });
  const verify = await cli(runVerify, ['--release', RELEASE, '--namespace', NS]);
  expect(verify.code).toBe(5);
  expect(verify.output).toMatch(/no upgrade guard\s+FAIL/);
}

/** Pod and node readiness, for the transcript when verify disagrees with the test. */
async function readiness(): Promise<string> {
  const pods = await rest.list('v1', 'Pod', { namespace: NS });
  const nodes = await rest.list('v1', 'Node', {});
  const cond = (o: unknown) => ((o as { status?: { conditions?: { type: string; status: string; lastTransitionTime?: string }[] } }).status?.conditions ?? [])
    .filter((c) => c.type === 'Ready').map((c) => `${c.status}@${c.lastTransitionTime}`).join(',');
  return [...pods.items.map((p) => `pod ${p.metadata.name}: Ready=${cond(p)}`), ...nodes.items.map((n) => `node ${n.metadata.name}: Ready=${cond(n)} unschedulable=${String((n as { spec?: { unschedulable?: boolean } }).spec?.unschedulable)}`)].join('\n');
}

async function expectVerifyPasses(): Promise<void> {
  const verify = await cli(runVerify, ['--release', RELEASE, '--namespace', NS]);
  if (verify.code !== 0) transcript.push(`readiness at ${new Date().toISOString()}:`, await readiness());
  expect(verify.output).toMatch(/no upgrade guard\s+PASS/);
  expect(verify.code).toBe(0);
}

function expectObserved(writes: ReturnType<AgentWriter['stop']> extends Promise<infer T> ? T : never, sequence: string, modelFailures: string[]): void {
  const counts = writes.reduce<Record<string, number>>((acc, w) => ({ ...acc, [w.outcome]: (acc[w.outcome] ?? 0) + 1 }), {});
  transcript.push(`observer: ${writes.length} AgentDeployment writes ${JSON.stringify(counts)}, sequence "${outcomeSequence(writes)}"`);
  const bad = writes.filter((w) => !['old', 'new', 'guard'].includes(w.outcome));
  expect(bad).toEqual([]);
  expect(modelFailures).toEqual([]);
  expect(outcomeSequence(writes)).toBe(sequence);
}

beforeAll(async () => {
  plane = await startControlPlane({ mode: 'cluster' });
  kc = plane.kubeConfig();
  rest = new KubeRest(kc);
  for (const dir of ['cache', 'config', 'data']) process.env[`HELM_${dir.toUpperCase()}_HOME`] = path.join(tmp, 'helm', dir);
  process.env.HELM_REGISTRY_CONFIG = path.join(tmp, 'helm', 'registry.json');
  repo = `oci://${registryAddress()}/lifecycle-${Date.now().toString(36)}`;

  const [oldPort, newPort] = [await freePort(), await freePort()];
  for (const [version, port, addField] of [[OLD, oldPort, false], [NEW, newPort, true]] as const) {
    const dir = wiredChart(path.join(tmp, 'charts'), version, port, addField);
    await helmOk(['package', dir, '--destination', tmp]);
    await helmOk(['push', path.join(tmp, `${CHART}-${version}.tgz`), repo, '--plain-http']);
  }
  for (const v of [3, 4] as const) {
    failingHelm[v] = path.join(tmp, `helm${v}-failing-activation`);
    fs.writeFileSync(
      failingHelm[v],
      `#!/bin/sh\nfor a in "$@"; do\n  if [ "$a" = "webhook.agentDeployment.enabled=true" ]; then echo "Error: injected by the test: this helm upgrade fails" >&2; exit 1; fi\ndone\nexec ${v === 3 ? toolPaths().helm3 : toolPaths().helm4} "$@"\n`,
      { mode: 0o755 },
    );
  }

  const namespace = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, labels: { 'nebari.dev/managed': 'true' } } };
  await rest.apply(namespace, { fieldManager: 'test' });
  standIns.push(await startOperatorStandIn(kc, 'old', oldPort, NS, RELEASE, lookups));
  standIns.push(await startOperatorStandIn(kc, 'new', newPort, NS, RELEASE, lookups));

  await helmOk(['install', RELEASE, chartRef(), '--version', OLD, '--plain-http', '-n', NS, '--set', 'namespace.create=false']);
  await waitFor('the 0.2.0 operator Deployment available', async () => (await observeRollout(rest, NS, `${RELEASE}-operator`, `${RELEASE}-webhook`)).done, { timeoutMs: 60_000, intervalMs: 300 });
  // The API server calls the old server once the CA is injected and its informer has it.
  await waitFor('the API server calling the 0.2.0 webhook server', async () => !!(await rest.create(fixtures.llmModel('probe', NS), { dryRun: true })), { timeoutMs: 60_000, intervalMs: 300 });
  // 200 objects: 100 LLMModels, 50 PassthroughModels, 50 AgentDeployments.
  const baseline = { 'nls-test/set': 'baseline' };
  const objects = [
    ...Array.from({ length: 100 }, (_, i) => fixtures.llmModel(`model-${String(i).padStart(3, '0')}`, NS, baseline)),
    ...Array.from({ length: 50 }, (_, i) => fixtures.passthroughModel(`provider-${String(i).padStart(2, '0')}`, NS, baseline)),
    ...Array.from({ length: 50 }, (_, i) => fixtures.agent(`agent-${String(i).padStart(2, '0')}`, NS, baseline)),
  ];
  for (let i = 0; i < objects.length; i += 20) await Promise.all(objects.slice(i, i + 20).map((o) => rest.create(o)));
}, 180_000);

afterAll(async () => {
  for (const s of standIns) await s.close();
  rest?.close();
  await plane?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
  console.log(transcript.join('\n'));
});

describe('nls lifecycle commands', () => {
  test('an unpublished target version is refused before anything changes', async () => {
    const before = await history();
    const crd = await rest.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'llmmodels.llm.nebari.dev' } });
    const r = await cli(runUpgrade, [...common(), '--version', '0.2.2-unpublished'], toolPaths().helm3);
    expect(r.code).toBe(3);
    expect(r.output).toMatch(/version 0\.2\.2-unpublished is not published/);
    expect(r.output).toMatch(/Nothing was changed/);
    expect(await history()).toEqual(before);
    expect(await guardExists()).toBe(false);
    const after = await rest.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'llmmodels.llm.nebari.dev' } });
    expect(after?.metadata).toMatchObject({ resourceVersion: (crd?.metadata as { resourceVersion: string }).resourceVersion });
  });

  test('a target that skips a minor release line, or is older, is refused before anything changes; --allow-skip passes the check', async () => {
    // The installed 0.2.0 chart, published again as 0.4.0: it skips the 0.3 line. Its PassthroughModel
    // CRD renames the stored version v1alpha1, so that crds-check refuses the run that --allow-skip
    // lets through the check phase, and nothing changes in this test either.
    const SKIP = '0.4.0';
    const dir = path.join(tmp, 'charts', SKIP, CHART);
    fs.cpSync(path.join(tmp, 'charts', OLD, CHART), dir, { recursive: true });
    const chartYaml = parseDocument(fs.readFileSync(path.join(dir, 'Chart.yaml'), 'utf8'));
    chartYaml.set('version', SKIP);
    chartYaml.set('appVersion', SKIP);
    fs.writeFileSync(path.join(dir, 'Chart.yaml'), chartYaml.toString());
    const crdFile = path.join(dir, 'crds', 'llm.nebari.dev_passthroughmodels.yaml');
    const crd = parseDocument(fs.readFileSync(crdFile, 'utf8'));
    // Drops the stored v1beta1 (v1alpha1 alone, stored): refused by crds-check.
    crd.deleteIn(['spec', 'versions', 0]);
    crd.setIn(['spec', 'versions', 0, 'storage'], true);
    fs.writeFileSync(crdFile, crd.toString());
    await helmOk(['package', dir, '--destination', tmp]);
    await helmOk(['push', path.join(tmp, `${CHART}-${SKIP}.tgz`), repo, '--plain-http']);

    const history0 = await history();
    expect(history0.at(-1)).toMatchObject({ chart: `${CHART}-${OLD}`, status: 'deployed' });
    const objects0 = await clusterObjects();
    expect(objects0.guard).toBe(false);

    const refused = await cli(runUpgrade, [...common(), '--version', SKIP]);
    expect(refused.code).toBe(3);
    expect(refused.output).toContain('!!! check refused after');
    expect(refused.output).toContain(
      'upgrading 0.2.0 → 0.4.0 skips 0.3: upgrades are supported one minor release at a time (RELEASES.md); ' +
        'upgrade to the newest 0.3.x first, then to 0.4.0, or pass --allow-skip if the release notes of 0.4.0 allow this skip',
    );
    expect(refused.output).toContain('Nothing was changed.');
    expect(refused.output).not.toContain('crds-check:');
    expect(await history()).toEqual(history0);
    expect(await clusterObjects()).toEqual(objects0);

    const older = await cli(runUpgrade, [...common(), '--version', '0.1.0', '--allow-skip']);
    expect(older.code).toBe(3);
    expect(older.output).toContain('the target 0.1.0 is older than the installed 0.2.0: nls upgrade does not downgrade; roll back with nls rollback --to 0.1.0');
    expect(older.output).toContain('Nothing was changed.');

    const allowed = await cli(runUpgrade, [...common(), '--version', SKIP, '--allow-skip']);
    expect(allowed.code).toBe(3);
    expect(allowed.output).toMatch(/warning: upgrading 0\.2\.0 → 0\.4\.0 skips 0\.3, .*--allow-skip/);
    expect(allowed.output).toMatch(/chart nebari-llm-serving 0\.4\.0 is published[\s\S]*done in[\s\S]*==> \[3\/8\] crds-check/);
    expect(allowed.output).toContain('!!! crds-check refused');
    expect(allowed.output).toContain('passthroughmodels.llm.nebari.dev: version v1beta1 is listed in status.storedVersions but the new CRD drops it');
    expect(allowed.output).toContain('Nothing was changed.');
    expect(await history()).toEqual(history0);
    expect(await clusterObjects()).toEqual(objects0);
  });

  test('upgrade: a rollout that cannot complete fails phase two, the guard holds, and --resume-from controller completes', async () => {
    const before = await snapshot();
    expect(before.size).toBe(200);
    // Before: the 0.2.0 CRD has no such field, so a strict write is refused.
    await expect(rest.request('PATCH', `/apis/llm.nebari.dev/v1alpha1/namespaces/${NS}/llmmodels/model-000`, {
      body: { spec: { [NEW_FIELD]: 'hello' } }, contentType: 'application/merge-patch+json', query: { fieldValidation: 'Strict' },
    })).rejects.toThrow(/unknown field/);

    const writer = new AgentWriter(rest, NS, 'up', { old: 'old', new: 'new' }, lookups);
    writer.start();
    await setNodesSchedulable(false);
    const failed = await cli(runUpgrade, [...common(), '--version', NEW, '--timeout', '12s']);
    expect(failed.code).toBe(4);
    expect(failed.output).toMatch(/!!! controller failed/);
    expect(failed.output).toContain('--resume-from controller');
    expect(failed.output).toMatch(/guard stays installed/);
    await expectGuardedState('up2');
    // Phase two took both AgentDeployment routes out (the guard is the only AgentDeployment rule).
    for (const [kind, suffix] of [['ValidatingWebhookConfiguration', 'validating'], ['MutatingWebhookConfiguration', 'mutating']]) {
      const config = await rest.get({ apiVersion: 'admissionregistration.k8s.io/v1', kind, metadata: { name: `${RELEASE}-${suffix}` } });
      expect((config as unknown as { webhooks: { name: string }[] }).webhooks.map((w) => w.name)).toEqual([`${suffix[0]}llmmodel.llm.nebari.dev`, `${suffix[0]}passthroughmodel.llm.nebari.dev`]);
    }

    await setNodesSchedulable(true);
    const resumed = await cli(runUpgrade, [...common(), '--version', NEW, '--timeout', '60s', '--resume-from', 'controller']);
    expect(resumed.code).toBe(0);
    expect(resumed.output).toMatch(/crds: skipped/);
    await writer.settle();
    const writes = await writer.stop();
    expectObserved(writes, 'old guard new', writer.modelFailures);

    expect(await guardExists()).toBe(false);
    expect((await history()).at(-1)).toMatchObject({ chart: `${CHART}-${NEW}`, status: 'deployed' });
    expect(await snapshot()).toEqual(before);
    const patched = await rest.request<{ spec: Record<string, unknown> }>('PATCH', `/apis/llm.nebari.dev/v1alpha1/namespaces/${NS}/llmmodels/model-000`, {
      body: { spec: { [NEW_FIELD]: 'hello' } }, contentType: 'application/merge-patch+json', query: { fieldValidation: 'Strict' },
    });
    expect(patched.spec[NEW_FIELD]).toBe('hello');
    const crd = await rest.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'llmmodels.llm.nebari.dev' } });
    expect((crd?.metadata as { managedFields: { manager: string }[] }).managedFields.map((m) => m.manager)).toContain('nebari-llm-serving-cli');
    await expectVerifyPasses();
  });

  test('rollback: helm failing in phase three keeps the guard, and --resume-from activate completes', async () => {
    const before = await snapshot();
    const writer = new AgentWriter(rest, NS, 'back', { old: 'old', new: 'new' }, lookups);
    writer.start();
    const failed = await cli(runRollback, [...common(), '--to', OLD, '--timeout', '60s'], failingHelm[4]);
    expect(failed.code).toBe(4);
    expect(failed.output).toMatch(/!!! activate failed/);
    expect(failed.output).toContain('--resume-from activate');
    await expectGuardedState('back3');

    const resumed = await cli(runRollback, [...common(), '--to', OLD, '--timeout', '60s', '--resume-from', 'activate']);
    expect(resumed.code).toBe(0);
    await writer.settle();
    expectObserved(await writer.stop(), 'new guard old', writer.modelFailures);
    expect(await guardExists()).toBe(false);
    expect((await history()).at(-1)).toMatchObject({ chart: `${CHART}-${OLD}`, status: 'deployed' });
    expect(await snapshot()).toEqual(before);
    await expectVerifyPasses();
  });

  test('upgrade again, with helm 3: helm failing in phase three keeps the guard, and --resume-from activate completes', async () => {
    const before = await snapshot();
    const writer = new AgentWriter(rest, NS, 'again', { old: 'old', new: 'new' }, lookups);
    writer.start();
    const failed = await cli(runUpgrade, [...common(), '--version', NEW, '--timeout', '60s'], failingHelm[3]);
    expect(failed.code).toBe(4);
    expect(failed.output).toMatch(/!!! activate failed/);
    await expectGuardedState('again3');
    const resumed = await cli(runUpgrade, [...common(), '--version', NEW, '--timeout', '60s', '--resume-from', 'activate'], toolPaths().helm3);
    expect(resumed.code).toBe(0);
    await writer.settle();
    expectObserved(await writer.stop(), 'old guard new', writer.modelFailures);
    expect((await history()).at(-1)).toMatchObject({ chart: `${CHART}-${NEW}`, status: 'deployed' });
    expect(await snapshot()).toEqual(before);
    expect(await guardExists()).toBe(false);
    await expectVerifyPasses();
  });

  test('crds apply refuses to drop a stored version, or a CRD the API server rejects, before writing any CRD', async () => {
    const crdRef = (plural: string) => ({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `${plural}.llm.nebari.dev` } });
    const versions = async () => Promise.all(['agentdeployments', 'llmmodels', 'passthroughmodels'].map(async (p) => (await rest.get(crdRef(p)))?.metadata as { resourceVersion: string }));
    const before = await versions();
    const chart = (name: string, edit: (crd: ReturnType<typeof parseDocument>) => void) => {
      const dir = path.join(tmp, 'crd-cases', name);
      fs.cpSync(path.join(tmp, 'charts', NEW, CHART), dir, { recursive: true });
      const file = path.join(dir, 'crds', 'llm.nebari.dev_passthroughmodels.yaml');
      const crd = parseDocument(fs.readFileSync(file, 'utf8'));
      edit(crd);
      fs.writeFileSync(file, crd.toString());
      return dir;
    };
    // v1beta1 dropped (v1alpha1 stored again): the stored version (with 50+ objects) would disappear.
    const dropped = await cli(runCrdsApply, ['--chart', chart('dropped', (crd) => {
      crd.deleteIn(['spec', 'versions', 0]);
      crd.setIn(['spec', 'versions', 0, 'storage'], true);
    })]);
    expect(dropped.code).toBe(3);
    expect(dropped.output).toContain('passthroughmodels.llm.nebari.dev: version v1beta1 is listed in status.storedVersions but the new CRD drops it');
    expect(dropped.output).toContain('nls storage migrate --crd passthroughmodels.llm.nebari.dev');
    // A schema the API server rejects, in the last of the three files: the first two are not applied either.
    const invalid = await cli(runCrdsApply, ['--chart', chart('invalid', (crd) => crd.setIn(['spec', 'versions', 0, 'schema', 'openAPIV3Schema', 'type'], 'array'))]);
    expect(invalid.code).toBe(3);
    expect(invalid.output).toMatch(/the API server rejects passthroughmodels\.llm\.nebari\.dev \(dry run\)/);
    expect(invalid.output).toContain('Nothing was changed.');
    expect(await versions()).toEqual(before);
  });
});
