// `nls crds apply`: the chart's crds/ applied server-side with our own field manager, forcing
// conflicts so ownership moves from Helm (which installs crds/ once and never updates them),
// one CRD at a time, each waited on until Established, stopping at the first failure. Nothing
// here ever deletes a CRD, and a change that would stop serving or drop a version that still
// has objects (or is recorded as stored) is refused before anything is written.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { conversionSpec } from '../../api/crd';
import { crdObjects } from '../../api/kinds';
import { KubeRest, type KubeObject } from '../../kube/rest';
import { durationMs, parseFlags } from '../flags';
import { kubeConfigFrom } from '../kubeconfig';
import { Helm, findHelm, type ChartSource } from './helm';
import { ExitCode, type Phase, RefusedError, UsageError, runPhases } from '../phases';
import { findInstallation } from './installation';
import { servingCa, waitUntil } from './wait';
import { commandOutput } from '../output';

export const FIELD_MANAGER = 'nebari-llm-serving-cli';

export const crdsUsage = `Usage:
  nls crds apply [--chart oci://REGISTRY/PATH/nebari-llm-serving|DIR|FILE.tgz] [--version V] [options]
Applies the chart's crds/ server-side (field manager ${FIELD_MANAGER}, conflicts forced so
ownership moves from Helm), waits until each CRD is Established, and stops at the first failure.
Without --chart it applies the CRDs built into this nls.
Never deletes a CRD; refuses to stop serving or drop a version that still has objects.
Options:
  --plain-http          talk to the OCI registry over HTTP (helm's flag)
  --kubeconfig PATH     kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster)
  --context NAME        kubeconfig context
  --timeout DURATION    how long to wait for each CRD (default 60s)
  --release NAME        with --namespace: the installed release whose webhook serves conversion;
  --namespace NS        a CRD that gains versions gets its spec.conversion pointed there first
                        (needed when an older release's CRDs already hold objects; nls upgrade
                        does this itself)
  --dry-run             print the plan; change nothing`;

export interface CrdObject extends KubeObject {
  metadata: { name: string; [key: string]: unknown };
  spec: {
    group: string;
    scope: string;
    names: { kind: string; plural: string };
    versions: { name: string; served: boolean; storage: boolean }[];
  };
  status?: { storedVersions?: string[]; conditions?: { type: string; status: string; reason?: string; message?: string }[] };
}

type LiveConversion = { spec: { conversion?: { strategy?: string } } };

/** The release whose webhook Service and CA our CRDs' conversion points at before they change. */
export interface ConversionRelease {
  readonly service: string;
  readonly namespace: string;
  /** base64 PEM of the serving CA, as the webhook Secret stores ca.crt. */
  readonly caBundle: string;
}

/**
 * True when applying `desired` over `live` needs the conversion webhook in place first: the new
 * CRD serves several versions (objects of the others convert through the operator's /convert),
 * the installed one does not convert through a webhook yet (an older release's single-version
 * CRD), and the storage version changes, so the API server would otherwise just relabel objects.
 */
export function needsConversionFirst(live: CrdObject | undefined, desired: CrdObject): boolean {
  if (!live || desired.spec.versions.filter((v) => v.served).length < 2) return false;
  if ((live as unknown as LiveConversion).spec.conversion?.strategy === 'Webhook') return false;
  const storage = (crd: CrdObject) => crd.spec.versions.find((v) => v.storage)?.name;
  return storage(live) !== storage(desired) || live.spec.versions.length < desired.spec.versions.length;
}

/** Every CustomResourceDefinition in the YAML files of a directory (sorted by file name). */
export function readCrdDirectory(dir: string): CrdObject[] {
  if (!fs.existsSync(dir)) throw new RefusedError(`the chart has no crds/ directory at ${dir}`);
  const files = fs.readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)).sort();
  const crds = files.flatMap((f) =>
    parseAllDocuments(fs.readFileSync(path.join(dir, f), 'utf8'))
      .map((d) => d.toJS() as CrdObject | null)
      .filter((o): o is CrdObject => !!o && o.kind === 'CustomResourceDefinition'),
  );
  if (crds.length === 0) throw new RefusedError(`no CustomResourceDefinition in ${dir}`);
  return crds;
}

/**
 * Why applying `desired` over `live` would lose data or be refused by the API server; empty
 * when it is safe. `objectCounts` gives, per version name, whether objects are readable there.
 */
export function crdChangeProblems(live: CrdObject | undefined, desired: CrdObject, objectsExist: (version: string) => boolean): string[] {
  if (!live) return [];
  const name = desired.metadata.name;
  const problems: string[] = [];
  if (live.spec.group !== desired.spec.group) problems.push(`${name}: spec.group would change from ${live.spec.group} to ${desired.spec.group}; a CRD's group cannot change`);
  if (live.spec.scope !== desired.spec.scope) problems.push(`${name}: spec.scope would change from ${live.spec.scope} to ${desired.spec.scope}; a CRD's scope cannot change`);
  if (live.spec.names.kind !== desired.spec.names.kind) problems.push(`${name}: spec.names.kind would change from ${live.spec.names.kind} to ${desired.spec.names.kind}`);
  const wanted = new Map(desired.spec.versions.map((v) => [v.name, v]));
  const stored = live.status?.storedVersions ?? [];
  for (const version of live.spec.versions) {
    const next = wanted.get(version.name);
    if (!next && stored.includes(version.name)) {
      problems.push(`${name}: version ${version.name} is listed in status.storedVersions but the new CRD drops it; migrate the stored objects to ${desiredStorage(desired)} and remove ${version.name} from storedVersions first: nls storage migrate --crd ${name}`);
    } else if (version.served && (!next || !next.served) && objectsExist(version.name)) {
      problems.push(`${name}: version ${version.name} has objects but the new CRD ${next ? 'stops serving' : 'drops'} it; migrate them to ${desiredStorage(desired)} first: nls storage migrate --crd ${name}`);
    }
  }
  return problems;
}

function desiredStorage(crd: CrdObject): string {
  return crd.spec.versions.find((v) => v.storage)?.name ?? '(no storage version)';
}

function condition(crd: CrdObject | undefined, type: string) {
  return crd?.status?.conditions?.find((c) => c.type === type);
}

/** Whether any object of `crd` can be listed at `version` (objects exist in every served version alike). */
async function objectsExistAt(rest: KubeRest, crd: CrdObject, version: string): Promise<boolean> {
  const list = await rest.request<{ items: unknown[] }>('GET', `/apis/${crd.spec.group}/${version}/${crd.spec.names.plural}`, { query: { limit: '1' } });
  return list.items.length > 0;
}

/** Refuses (RefusedError) when any CRD change is unsafe; then asks the API server to validate every CRD (dry run). */
export async function checkCrds(rest: KubeRest, crds: readonly CrdObject[], note: (line: string) => void, conversion?: ConversionRelease): Promise<void> {
  const problems: string[] = [];
  for (const crd of crds) {
    const live = (await rest.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: crd.metadata.name } })) as CrdObject | undefined;
    // Every served version lists the same objects; asking in the storage version needs no
    // conversion webhook, which may not answer yet (or ever, for an operator being replaced).
    const storage = live?.spec.versions.find((v) => v.storage && v.served)?.name;
    const anyObjects = live && storage ? await objectsExistAt(rest, live, storage) : false;
    problems.push(...crdChangeProblems(live, crd, () => anyObjects));
    if (needsConversionFirst(live, crd)) {
      if (conversion) note(`${crd.metadata.name}: its conversion will point at ${conversion.namespace}/${conversion.service} (/convert) before it changes`);
      else if (anyObjects) {
        problems.push(
          `${crd.metadata.name}: the new CRD stores ${desiredStorage(crd)} and serves the other versions through the operator's conversion webhook, ` +
            'but the installed CRD has none and holds objects; without it the API server would only relabel them. ' +
            'Run nls upgrade, or nls crds apply --release NAME --namespace NS of the installed release, so conversion points at its webhook first',
        );
      }
    }
    note(`${crd.metadata.name}: ${live ? `installed (versions ${live.spec.versions.map((v) => v.name).join(', ')}), will be updated` : 'not installed, will be created'}`);
  }
  if (problems.length > 0) throw new RefusedError(`unsafe CRD change, nothing applied:\n      ${problems.join('\n      ')}`);
  for (const crd of crds) {
    try {
      await rest.apply(crd, { fieldManager: FIELD_MANAGER, force: true, dryRun: true });
    } catch (error) {
      throw new RefusedError(`the API server rejects ${crd.metadata.name} (dry run): ${(error as Error).message}`);
    }
  }
  note(`the API server accepts all ${crds.length} CRDs (server-side dry run)`);
}

/** Applies each CRD and waits until it is Established with the applied versions; stops at the first failure. */
export async function applyCrds(rest: KubeRest, crds: readonly CrdObject[], timeoutMs: number, note: (line: string) => void, conversion?: ConversionRelease): Promise<void> {
  for (const crd of crds) {
    const name = crd.metadata.name;
    const live = (await rest.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name } })) as CrdObject | undefined;
    if (conversion && needsConversionFirst(live, crd)) {
      // Harmless on the installed single-version CRD; once the new one lands, every object of
      // another version converts through the release's webhook (or fails, never relabelled).
      await rest.jsonPatch({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name } }, [
        { op: 'add', path: '/spec/conversion', value: conversionSpec({ name: conversion.service, namespace: conversion.namespace }, conversion.caBundle) },
      ]);
      note(`${name}: conversion now points at ${conversion.namespace}/${conversion.service} (/convert)`);
    }
    let stored: CrdObject;
    try {
      stored = (await rest.apply(crd, { fieldManager: FIELD_MANAGER, force: true })) as CrdObject;
    } catch (error) {
      throw new Error(`applying ${name} failed: ${(error as Error).message}`);
    }
    const want = crd.spec.versions.map((v) => v.name).join(',');
    if (stored.spec.versions.map((v) => v.name).join(',') !== want) throw new Error(`${name}: the stored CRD has versions ${stored.spec.versions.map((v) => v.name).join(',')}, not ${want}`);
    await waitUntil(
      `${name} Established`,
      async () => {
        const current = (await rest.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name } })) as CrdObject | undefined;
        const established = condition(current, 'Established');
        const names = condition(current, 'NamesAccepted');
        if (names?.status === 'False') throw new Error(`${name}: NamesAccepted is False (${names.reason}: ${names.message})`);
        return established?.status === 'True'
          ? { done: true, status: `${name} Established (generation ${String((current?.metadata as { generation?: number }).generation ?? '?')})` }
          : { done: false, status: `${name} not Established yet${established?.message ? `: ${established.message}` : ''}` };
      },
      { timeoutMs, report: note },
    );
  }
}

export interface CrdSource {
  readonly chart?: ChartSource;
  readonly version?: string;
}

/** The CRDs of a chart (pulled with helm), or the ones built into this nls. */
export async function loadCrds(source: CrdSource, helm: () => Helm): Promise<CrdObject[]> {
  if (!source.chart) return crdObjects() as unknown as CrdObject[];
  const dir = await helm().pull(source.chart, source.version);
  return readCrdDirectory(path.join(dir, 'crds'));
}

export interface CrdsApplyContext {
  readonly rest: KubeRest;
  readonly source: CrdSource;
  readonly helm: () => Helm;
  readonly timeoutMs: number;
  crds?: CrdObject[];
  /** The installed release to point conversion at before a CRD gains versions (nls upgrade, --release). */
  conversionRelease?: { readonly name: string; readonly namespace: string };
  conversion?: ConversionRelease;
}

/** The release's webhook Service and serving CA, from its operator Deployment and webhook Secret. */
export async function findConversionRelease(rest: KubeRest, release: { name: string; namespace: string }): Promise<ConversionRelease> {
  const installation = await findInstallation(rest, release.name, release.namespace);
  if (!installation) throw new RefusedError(`release ${release.name} has no operator Deployment in ${release.namespace}; its webhook cannot serve conversion`);
  const caBundle = await servingCa(rest, installation.namespace, installation.webhookSecret);
  if (!caBundle) throw new RefusedError(`Secret ${installation.namespace}/${installation.webhookSecret} has no ca.crt yet; wait until the operator is Ready`);
  return { service: installation.webhookService, namespace: installation.namespace, caBundle };
}

export function describeSource(source: CrdSource): string {
  return source.chart ? `${source.chart.ref}${source.version ? ` --version ${source.version}` : ''}` : 'the CRDs built into this nls';
}

/** The two CRD phases, shared with `upgrade`. */
export function crdPhases<C extends CrdsApplyContext>(): Phase<C>[] {
  return [
    {
      name: 'crds-check',
      title: 'read the target CRDs and check the change is safe',
      waitsFor: 'the API server to accept every CRD in a server-side dry run',
      readOnly: true,
      actions: (c) => [
        `read crds/ of ${describeSource(c.source)}`,
        'refuse if a CRD would change group, scope or kind, or stop serving / drop a version that has objects or is stored',
        ...(c.conversionRelease ? [`read the webhook Service and CA of release ${c.conversionRelease.name} (conversion goes there before a CRD gains versions)`] : []),
        `server-side apply --dry-run=server --force-conflicts --field-manager=${FIELD_MANAGER}`,
      ],
      run: async (c, r) => {
        c.crds = await loadCrds(c.source, c.helm);
        r.note(`${c.crds.length} CRDs: ${c.crds.map((x) => x.metadata.name).join(', ')}`);
        if (c.conversionRelease) c.conversion = await findConversionRelease(c.rest, c.conversionRelease);
        await checkCrds(c.rest, c.crds, r.note, c.conversion);
      },
    },
    {
      name: 'crds',
      title: 'apply the CRDs server-side (ownership moves from Helm)',
      waitsFor: 'each CRD to be Established, one at a time, stopping at the first failure',
      actions: (c) => [
        ...(c.conversionRelease ? [`point spec.conversion of a CRD that gains versions at release ${c.conversionRelease.name}'s webhook first (JSON patch)`] : []),
        `server-side apply --force-conflicts --field-manager=${FIELD_MANAGER}, then wait Established, for each CRD`,
      ],
      run: async (c, r) => {
        c.crds ??= await loadCrds(c.source, c.helm);
        if (c.conversionRelease) c.conversion ??= await findConversionRelease(c.rest, c.conversionRelease);
        await applyCrds(c.rest, c.crds, c.timeoutMs, r.note, c.conversion);
      },
    },
  ];
}

/** Shared connection flags of the lifecycle commands (re-exported for the commands that import it from here). */
export { kubeConfigFrom };

/** `nls crds <action>` as the dispatcher calls it. */
export async function runCrds(args: string[], out: (line: string) => void = commandOutput): Promise<number> {
  const [action, ...rest] = args;
  if (action !== 'apply') {
    out(`crds: unknown action "${action ?? ''}"; the only action is apply\n${crdsUsage}`);
    return ExitCode.usage;
  }
  return runCrdsApply(rest, out);
}

/** `nls crds apply ...`; returns the exit code. */
export async function runCrdsApply(args: string[], out: (line: string) => void = commandOutput): Promise<number> {
  let context: CrdsApplyContext;
  let dryRun: boolean;
  try {
    const flags = parseFlags('crds apply', args, {
      chart: { type: 'string' },
      version: { type: 'string' },
      kubeconfig: { type: 'string' },
      context: { type: 'string' },
      timeout: { type: 'string' },
      release: { type: 'string' },
      namespace: { type: 'string' },
      'plain-http': { type: 'boolean' },
      'dry-run': { type: 'boolean' },
    });
    if (flags.positionals.length > 0) throw new UsageError(`crds apply: unexpected argument "${flags.positionals[0]}"\n${crdsUsage}`);
    if (!!flags.values.release !== !!flags.values.namespace) throw new UsageError('crds apply: --release and --namespace go together (the installed release whose webhook serves conversion)');
    if (flags.values.version && !flags.values.chart) throw new UsageError('crds apply: --version needs --chart (which chart to take the version of)');
    dryRun = flags.values['dry-run'] === true;
    const chart = flags.values.chart ? { ref: flags.values.chart, registryArgs: flags.values['plain-http'] ? ['--plain-http'] : [] } : undefined;
    const kubeconfig = flags.values.kubeconfig;
    context = {
      rest: dryRun ? (undefined as unknown as KubeRest) : new KubeRest(kubeConfigFrom(kubeconfig, flags.values.context)),
      source: { chart, version: flags.values.version },
      helm: () => new Helm({ binary: findHelm(), kubeconfig, kubeContext: flags.values.context }),
      timeoutMs: durationMs('timeout', flags.values.timeout ?? '60s'),
      conversionRelease: flags.values.release ? { name: flags.values.release, namespace: flags.values.namespace! } : undefined,
    };
  } catch (error) {
    out(`error: ${(error as Error).message}`);
    return error instanceof UsageError ? ExitCode.usage : ExitCode.error;
  }
  try {
    return await runPhases(crdPhases<CrdsApplyContext>(), context, { command: ['nls', 'crds', 'apply', ...args], dryRun, out });
  } finally {
    context.rest?.close();
  }
}
