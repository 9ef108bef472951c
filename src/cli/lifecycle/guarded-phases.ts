// The guarded sequence both `nls upgrade` and `nls rollback` run (seed 000): the phase builders
// (guard -> [routes off] -> controller -> activate -> unguard), each a helm upgrade of one chart
// version with the two switching values set, plus the checks every run starts with (release
// present, chart published and able to switch) and the flags both commands share.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { KubeRest, type KubeObject } from '../../kube/rest';
import { type CrdsApplyContext, FIELD_MANAGER, kubeConfigFrom } from './crds';
import { type FlagOptions, durationMs, goDuration, parseFlags } from '../flags';
import { type ChartSource, Helm, type ReleaseRef, type ReleaseRevision, findHelm } from './helm';
import { type Installation, findInstallation } from './installation';
import { type Phase, RefusedError, UsageError, runPhases } from '../phases';
import { observeAgentDeploymentTrust, observeGuardEnforced, observeGuardGone, observeRollout, waitUntil } from './wait';

export const CHART_NAME = 'nebari-llm-serving';
/** Chart values that switch the AgentDeployment routes and the guard (charts/nebari-llm-serving/values.yaml). */
export const ROUTES_VALUE = 'webhook.agentDeployment.enabled';
export const GUARD_VALUE = 'webhook.upgradeGuard.enabled';
export const GUARD_TEMPLATE = 'templates/agentdeployment-upgrade-guard.yaml';
/** Pod-template annotation that forces a new ReplicaSet even when nothing else changed. */
export const RESTART_ANNOTATION = 'llm.nebari.dev/restarted-at';

/** One chart version the guarded phases install, with the values to install it with. */
export interface ReleaseTarget {
  readonly chart: ChartSource;
  readonly version: string;
  /** Values files (the release's values written to a file, or the user's -f files). */
  valueFiles: string[];
  /** How the plan describes the values. */
  readonly valuesLabel: string;
}

export interface GuardedContext extends CrdsApplyContext {
  readonly rest: KubeRest;
  readonly release: ReleaseRef;
  readonly helmTimeout: string;
  installation?: Installation;
  /** The rendered guard (set by the check phase). */
  guard?: KubeObject & { metadata: { name: string }; webhooks: { name: string }[] };
}

/** Values keys the phases set; taken out of reused values so the phase decides them. */
export function withoutPhaseKeys(values: Record<string, unknown>): Record<string, unknown> {
  const copy = structuredClone(values);
  const webhook = copy.webhook as Record<string, Record<string, unknown>> | undefined;
  if (webhook) {
    if (webhook.agentDeployment) delete webhook.agentDeployment.enabled;
    if (webhook.upgradeGuard) delete webhook.upgradeGuard.enabled;
    for (const key of ['agentDeployment', 'upgradeGuard']) if (webhook[key] && Object.keys(webhook[key]).length === 0) delete webhook[key];
    if (Object.keys(webhook).length === 0) delete copy.webhook;
  }
  return copy;
}

const valueDirs: string[] = [];

/** Writes values to a private temporary file for `--values`; removed when the process exits (values may hold secrets). */
export function writeValuesFile(values: Record<string, unknown>, label: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-values-'));
  if (valueDirs.length === 0) process.once('exit', () => valueDirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
  valueDirs.push(dir);
  const file = path.join(dir, `${label}.yaml`);
  fs.writeFileSync(file, stringify(values), { mode: 0o600 });
  return file;
}

function hasValue(values: Record<string, unknown>, dotted: string): boolean {
  let node: unknown = values;
  for (const key of dotted.split('.')) {
    if (typeof node !== 'object' || node === null || !(key in node)) return false;
    node = (node as Record<string, unknown>)[key];
  }
  return true;
}

/** Refuses unless `version` of the chart can be read from its source (seed 001: a release can precede its chart). */
export async function requirePublished(helm: Helm, chart: ChartSource, version: string): Promise<void> {
  const shown = await helm.showChart(chart, version);
  if (!shown.chart) {
    throw new RefusedError(
      `chart ${chart.ref} version ${version} is not published (helm show chart: ${shown.problem}); ` +
        'wait until the chart is published (a release can appear before its chart) and check --chart and --version',
    );
  }
  if (shown.chart.name !== CHART_NAME) throw new RefusedError(`${chart.ref} is the chart "${shown.chart.name}", not ${CHART_NAME}; check --chart`);
  if (shown.chart.version !== version && !/^[a-z]+:\/\//.test(chart.ref)) {
    throw new RefusedError(`${chart.ref} is version ${shown.chart.version}, not ${version}; point --chart at version ${version}`);
  }
  const values = await helm.showValues(chart, version);
  for (const key of [ROUTES_VALUE, GUARD_VALUE]) {
    if (!hasValue(values, key)) throw new RefusedError(`chart ${CHART_NAME} ${version} has no value ${key}, so it cannot run the guarded sequence; use 0.2.0 or later`);
  }
}

/** The release's history; refuses when there is no release or a helm operation is in progress. */
export async function requireRelease(helm: Helm, release: ReleaseRef): Promise<ReleaseRevision[]> {
  const history = await helm.history(release);
  if (history.length === 0) {
    throw new RefusedError(`there is no release ${release.name} in namespace ${release.namespace}; install it first (docs/installation.md) or pass --release/--namespace`);
  }
  const last = history[history.length - 1];
  if (last.status.startsWith('pending-')) {
    throw new RefusedError(`release ${release.name} revision ${last.revision} is ${last.status} (another helm operation is running or was interrupted); wait for it, or clear it with helm rollback, then retry`);
  }
  return history;
}

/** Renders the guard of `target` for this release (offline helm template, for the cluster's Kubernetes version). */
export async function renderGuard(helm: Helm, rest: KubeRest, release: ReleaseRef, target: ReleaseTarget): Promise<NonNullable<GuardedContext['guard']>> {
  const { gitVersion } = await rest.request<{ gitVersion: string }>('GET', '/version');
  const yaml = await helm.template(release, target.chart, target.version, { files: target.valueFiles, set: { [GUARD_VALUE]: true } }, gitVersion, [GUARD_TEMPLATE]);
  const docs = parseAllDocuments(yaml).map((d) => d.toJS() as KubeObject | null).filter((o): o is KubeObject => !!o && o.kind === 'MutatingWebhookConfiguration');
  if (docs.length !== 1) throw new RefusedError(`chart ${target.version} renders ${docs.length} guard objects from ${GUARD_TEMPLATE}; expected one MutatingWebhookConfiguration`);
  return docs[0] as NonNullable<GuardedContext['guard']>;
}

function helmUpgradeLine(c: GuardedContext, target: ReleaseTarget, set: Record<string, boolean>): string {
  const sets = Object.entries(set).map(([k, v]) => `--set ${k}=${v}`).join(' ');
  return `helm upgrade ${c.release.name} ${target.chart.ref} --version ${target.version} -n ${c.release.namespace} (${target.valuesLabel}) ${sets}`;
}

async function installationOf(c: GuardedContext): Promise<Installation> {
  const found = await findInstallation(c.rest, c.release.name, c.release.namespace);
  if (!found) throw new Error(`no operator Deployment labelled app.kubernetes.io/instance=${c.release.name} in ${c.release.namespace}`);
  c.installation = found;
  return found;
}

async function helmUpgrade(c: GuardedContext, target: ReleaseTarget, set: Record<string, boolean>, note: (l: string) => void): Promise<void> {
  note(helmUpgradeLine(c, target, set));
  await c.helm().upgrade(c.release, target.chart, target.version, { files: target.valueFiles, set }, c.helmTimeout);
}

/** Phase one: the fail-closed guard, adopted by the release so the following helm upgrades keep it. */
export function guardPhase<C extends GuardedContext>(target: (c: C) => ReleaseTarget, from: string): Phase<C> {
  return {
    name: 'guard',
    title: `install the AgentDeployment guard (from ${from})`,
    waitsFor: 'the API server to deny a dry-run AgentDeployment create through the guard',
    actions: (c) => [
      `helm template ${c.release.name} ${target(c).chart.ref} --version ${target(c).version} --show-only ${GUARD_TEMPLATE} --set ${GUARD_VALUE}=true`,
      `server-side apply of that MutatingWebhookConfiguration (field manager ${FIELD_MANAGER}), annotated for adoption by release ${c.release.name}`,
    ],
    run: async (c, r) => {
      const guard = structuredClone(c.guard!);
      const metadata = guard.metadata as { annotations?: Record<string, string>; labels?: Record<string, string> };
      metadata.annotations = { ...metadata.annotations, 'meta.helm.sh/release-name': c.release.name, 'meta.helm.sh/release-namespace': c.release.namespace };
      metadata.labels = { ...metadata.labels, 'app.kubernetes.io/managed-by': 'Helm' };
      // Labels that change with every chart version stay Helm's alone, so a later chart's apply
      // never conflicts with what we applied here.
      delete metadata.labels['helm.sh/chart'];
      delete metadata.labels['app.kubernetes.io/version'];
      await c.rest.apply(guard, { fieldManager: FIELD_MANAGER, force: true });
      r.note(`applied MutatingWebhookConfiguration ${guard.metadata.name}`);
      await waitUntil('the guard to be enforced', () => observeGuardEnforced(c.rest, c.release.namespace, guard.webhooks[0].name), { timeoutMs: c.timeoutMs, report: r.note });
    },
  };
}

/** The AgentDeployment routes off while the guard stays (the "phase-two bundle") — no restart. */
export function routesOffPhase<C extends GuardedContext>(target: (c: C) => ReleaseTarget, from: string): Phase<C> {
  return {
    name: 'routes-off',
    title: `remove both AgentDeployment routes with the ${from} chart, guard kept`,
    waitsFor: 'helm to finish the upgrade',
    actions: (c) => [helmUpgradeLine(c, target(c), { [GUARD_VALUE]: true, [ROUTES_VALUE]: false })],
    run: async (c, r) => helmUpgrade(c, target(c), { [GUARD_VALUE]: true, [ROUTES_VALUE]: false }, r.note),
  };
}

/** Phase two: the chart with the routes off, a forced restart, and the wait for only new pods. */
export function controllerPhase<C extends GuardedContext>(target: (c: C) => ReleaseTarget, what: string): Phase<C> {
  return {
    name: 'controller',
    title: `${what} with the AgentDeployment routes off; restart the operator`,
    waitsFor: 'the rollout to finish with only new pods behind the webhook Service',
    actions: (c) => [
      helmUpgradeLine(c, target(c), { [GUARD_VALUE]: true, [ROUTES_VALUE]: false }),
      `restart the operator Deployment of ${c.release.name} (pod-template annotation ${RESTART_ANNOTATION})`,
    ],
    run: async (c, r) => {
      await helmUpgrade(c, target(c), { [GUARD_VALUE]: true, [ROUTES_VALUE]: false }, r.note);
      const inst = await installationOf(c);
      const restartedAt = new Date().toISOString();
      await c.rest.mergePatch(
        { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: inst.deployment, namespace: inst.namespace } },
        { spec: { template: { metadata: { annotations: { [RESTART_ANNOTATION]: restartedAt } } } } },
        { fieldManager: FIELD_MANAGER },
      );
      r.note(`restarted Deployment ${inst.deployment} (${RESTART_ANNOTATION}=${restartedAt})`);
      await waitUntil('the operator rollout', () => observeRollout(c.rest, inst.namespace, inst.deployment, inst.webhookService), { timeoutMs: c.timeoutMs, report: r.note });
    },
  };
}

/** Phase three: the routes back on; the CA must be trusted by every AgentDeployment webhook. */
export function activatePhase<C extends GuardedContext>(target: (c: C) => ReleaseTarget): Phase<C> {
  return {
    name: 'activate',
    title: 'turn the AgentDeployment routes on (guard kept)',
    waitsFor: "the serving CA in the webhook Secret and every AgentDeployment webhook's caBundle equal to it",
    actions: (c) => [helmUpgradeLine(c, target(c), { [GUARD_VALUE]: true, [ROUTES_VALUE]: true })],
    run: async (c, r) => {
      await helmUpgrade(c, target(c), { [GUARD_VALUE]: true, [ROUTES_VALUE]: true }, r.note);
      const inst = await installationOf(c);
      await waitUntil('the serving CA to be trusted', () => observeAgentDeploymentTrust(c.rest, inst.namespace, inst.webhookSecret, inst.webhookConfigurations), {
        timeoutMs: c.timeoutMs,
        report: r.note,
      });
    },
  };
}

/** Removing the guard through helm (the release adopted it), then waiting until writes pass it. */
export function unguardPhase<C extends GuardedContext>(target: (c: C) => ReleaseTarget): Phase<C> {
  return {
    name: 'unguard',
    title: 'remove the AgentDeployment guard',
    waitsFor: 'the guard to be gone and a dry-run AgentDeployment create to pass it',
    actions: (c) => [helmUpgradeLine(c, target(c), { [GUARD_VALUE]: false, [ROUTES_VALUE]: true })],
    run: async (c, r) => {
      await helmUpgrade(c, target(c), { [GUARD_VALUE]: false, [ROUTES_VALUE]: true }, r.note);
      const guard = c.guard!;
      await waitUntil('the guard to be removed', () => observeGuardGone(c.rest, c.release.namespace, guard.metadata.name, guard.webhooks[0].name), {
        timeoutMs: c.timeoutMs,
        report: r.note,
      });
    },
  };
}

/** What a failure in each guarded phase leaves behind. */
export function guardedFailureNote(phase: string): string | undefined {
  if (phase === 'crds-check' || phase === 'check') return undefined;
  if (phase === 'crds') return 'CRDs applied before the failure stay applied; the guard is not installed yet and nothing else changed.';
  if (phase === 'unguard') {
    return 'The new version is active; only the guard removal failed, so AgentDeployment writes stay unavailable until it is removed (LLMModel and PassthroughModel writes work).';
  }
  return 'The AgentDeployment guard stays installed: AgentDeployment CREATE/UPDATE are denied until the sequence completes; LLMModel and PassthroughModel writes keep working.';
}

/** Flags shared by upgrade and rollback. */
export const lifecycleFlags = {
  chart: { type: 'string' },
  version: { type: 'string' },
  to: { type: 'string' },
  release: { type: 'string' },
  namespace: { type: 'string' },
  values: { type: 'string', short: 'f', multiple: true },
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  timeout: { type: 'string' },
  'resume-from': { type: 'string' },
  'plain-http': { type: 'boolean' },
  'dry-run': { type: 'boolean' },
} as const satisfies FlagOptions;

export interface LifecycleArgs {
  readonly chart: ChartSource;
  readonly release: ReleaseRef;
  readonly valueFiles: string[];
  readonly kubeconfig?: string;
  readonly context?: string;
  readonly timeoutMs: number;
  readonly resumeFrom?: string;
  readonly dryRun: boolean;
  readonly values: Record<string, string>;
  /** Every switch given, including the command's own (`extraSwitches`). */
  readonly switches: ReadonlySet<string>;
}

/** Parses the shared flags plus `extraSwitches`, the switches only this command knows (e.g. upgrade's `allow-skip`). */
export function parseLifecycleArgs(command: string, args: readonly string[], usage: string, required: readonly string[], extraSwitches: readonly string[] = []): LifecycleArgs {
  const options: FlagOptions = { ...lifecycleFlags, ...Object.fromEntries(extraSwitches.map((name) => [name, { type: 'boolean' }])) };
  const flags = parseFlags(command, args, options);
  if (flags.positionals.length > 0) throw new UsageError(`${command}: unexpected argument "${flags.positionals[0]}"\n${usage}`);
  const entries = Object.entries(flags.values);
  const values = Object.fromEntries(entries.filter((e): e is [string, string] => typeof e[1] === 'string'));
  const switches = new Set(entries.filter(([, v]) => v === true).map(([name]) => name));
  for (const name of required) if (!values[name]) throw new UsageError(`${command}: --${name} is required\n${usage}`);
  const valueFiles = (flags.values.values as string[] | undefined) ?? []; // lifecycleFlags: multiple strings
  for (const file of valueFiles) if (!fs.existsSync(file)) throw new UsageError(`${command}: values file ${file} does not exist`);
  return {
    chart: { ref: values.chart, registryArgs: switches.has('plain-http') ? ['--plain-http'] : [] },
    release: { name: values.release ?? CHART_NAME, namespace: values.namespace ?? `${CHART_NAME}-system` },
    valueFiles,
    kubeconfig: values.kubeconfig,
    context: values.context,
    timeoutMs: durationMs('timeout', values.timeout ?? '5m'),
    resumeFrom: values['resume-from'],
    dryRun: switches.has('dry-run'),
    values,
    switches,
  };
}

/** Connections for a lifecycle command (none in a dry run). */
export function lifecycleContext(parsed: LifecycleArgs): Omit<GuardedContext, 'source'> {
  return {
    rest: parsed.dryRun ? (undefined as unknown as KubeRest) : new KubeRest(kubeConfigFrom(parsed.kubeconfig, parsed.context)),
    helm: () => new Helm({ binary: findHelm(), kubeconfig: parsed.kubeconfig, kubeContext: parsed.context }),
    release: parsed.release,
    timeoutMs: parsed.timeoutMs,
    helmTimeout: goDuration(parsed.timeoutMs),
  };
}

/** Runs a lifecycle command's phases (upgrade or rollback) and closes its API connections after. */
export async function runLifecycle<C extends { rest?: KubeRest }>(
  command: 'upgrade' | 'rollback',
  phases: readonly Phase<C>[],
  context: C,
  run: { parsed: LifecycleArgs; args: readonly string[]; version: string; out: (line: string) => void },
): Promise<number> {
  const { parsed, args, version, out } = run;
  try {
    out(`nls ${command}: release ${parsed.release.name} in ${parsed.release.namespace} to ${CHART_NAME} ${version}`);
    return await runPhases(phases, context, { command: ['nls', command, ...args], resumeFrom: parsed.resumeFrom, dryRun: parsed.dryRun, onFailure: guardedFailureNote, out });
  } finally {
    context.rest?.close();
  }
}
