// `nls storage migrate`: rewrites every stored object of a CRD in its storage version, then drops
// the other versions from status.storedVersions. Works for any CRD (ours, Envoy AI Gateway's).
//
// Each object gets a no-op update (PUT of the object as read): the API server decodes it from the
// version it was stored in and writes it in the storage version; an object already stored in that
// version encodes to the same bytes and is not written again, so an interrupted run is resumed by
// running it again. A writer changing an object meanwhile makes the update conflict (409): the
// object is read again and retried; the writer's own write was stored in the storage version too.
// storedVersions is trimmed only after a complete pass in which every object was rewritten or was
// deleted meanwhile, and only while the storage version is still the one the pass wrote.
import type * as k8s from '@kubernetes/client-node';
import { KubeApiError, KubeRest } from '../../kube/rest';
import { kubeConfigFrom } from './crds';
import { parseFlags } from '../flags';
import { ExitCode, RefusedError, UsageError } from '../phases';
import { commandOutput } from '../output';

export const storageUsage = `Usage:
  nls storage migrate --crd NAME [options]
Rewrites every stored object of the CustomResourceDefinition NAME in its storage version (a no-op
update of each object, page by page), then removes the other versions from status.storedVersions,
only after a pass in which every object was rewritten or deleted meanwhile. Safe while clients
write and when run twice at once (conflicts are read again and retried). Interrupted, run it
again: objects already rewritten are no-ops the API server does not write again.
Run it after the CRD with the new storage version is Established (nls upgrade waits for that).
Options:
  --crd NAME            the CRD, e.g. llmmodels.llm.nebari.dev or aigatewayroutes.aigateway.envoyproxy.io
  --page-size N         objects per list page (default 200)
  --concurrency N       updates in flight (default 8)
  --kubeconfig PATH     kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster)
  --context NAME        kubeconfig context
  --dry-run             print what would be done; change nothing`;

interface Crd {
  metadata: { name: string; resourceVersion?: string };
  spec: { group: string; scope: string; names: { plural: string; kind: string }; versions: { name: string; served: boolean; storage: boolean }[] };
  status?: { storedVersions?: string[] };
}

interface StoredObject {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; resourceVersion?: string };
  [key: string]: unknown;
}

export interface MigrateOptions {
  readonly pageSize?: number;
  readonly concurrency?: number;
  /** Conflicts retried per object before it counts as failed. @default 10 */
  readonly maxConflicts?: number;
  readonly out?: (line: string) => void;
}

export interface MigrateResult {
  readonly crd: string;
  readonly storageVersion: string;
  /** storedVersions before the run. */
  readonly storedBefore: readonly string[];
  readonly rewritten: number;
  /** Objects deleted between the list and their update. */
  readonly gone: number;
  /** Update conflicts that were read again and retried. */
  readonly conflicts: number;
  /** `namespace/name: reason` of objects that could not be rewritten. */
  readonly failed: readonly string[];
  /** Whether status.storedVersions is now exactly [storageVersion]. */
  readonly trimmed: boolean;
  readonly seconds: number;
}

const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

async function readCrd(rest: KubeRest, name: string): Promise<Crd> {
  try {
    return await rest.request<Crd>('GET', `${CRD_PATH}/${name}`);
  } catch (error) {
    if (error instanceof KubeApiError && error.code === 404) throw new RefusedError(`CustomResourceDefinition ${name} does not exist; name it as <plural>.<group>, see kubectl get crd`);
    throw error;
  }
}

function storageVersionOf(crd: Crd): string {
  const storage = crd.spec.versions.find((v) => v.storage);
  if (!storage) throw new RefusedError(`${crd.metadata.name} has no storage version`);
  return storage.name;
}

const keyOf = (o: StoredObject) => (o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name);

/** Runs `work` over `items` with at most `limit` in flight. */
async function inParallel<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** Migrates every stored object of CRD `name` to its storage version; see the file comment. */
export async function migrateStorage(rest: KubeRest, name: string, options: MigrateOptions = {}): Promise<MigrateResult> {
  const out = options.out ?? (() => undefined);
  const pageSize = options.pageSize ?? 200;
  const concurrency = options.concurrency ?? 8;
  const maxConflicts = options.maxConflicts ?? 10;
  const started = Date.now();
  const crd = await readCrd(rest, name);
  const storageVersion = storageVersionOf(crd);
  const storedBefore = crd.status?.storedVersions ?? [];
  const { group, names, scope } = crd.spec;
  const apiVersion = `${group}/${storageVersion}`;
  const base = `/apis/${group}/${storageVersion}`;
  const objectPath = (o: StoredObject) =>
    scope === 'Namespaced' ? `${base}/namespaces/${o.metadata.namespace}/${names.plural}/${o.metadata.name}` : `${base}/${names.plural}/${o.metadata.name}`;

  let rewritten = 0;
  let gone = 0;
  let conflicts = 0;
  const failed: string[] = [];

  const rewrite = async (listed: StoredObject) => {
    let object: StoredObject = { ...listed, apiVersion, kind: names.kind };
    for (let attempt = 0; ; attempt++) {
      try {
        await rest.request('PUT', objectPath(object), { body: object });
        rewritten++;
        return;
      } catch (error) {
        if (!(error instanceof KubeApiError)) throw error;
        if (error.code === 404) {
          gone++;
          return;
        }
        if (error.code !== 409 || attempt >= maxConflicts) {
          failed.push(`${keyOf(object)}: ${error.code} ${error.message}`);
          return;
        }
        conflicts++;
        try {
          object = { ...(await rest.request<StoredObject>('GET', objectPath(object))), apiVersion, kind: names.kind };
        } catch (readError) {
          if (readError instanceof KubeApiError && readError.code === 404) {
            gone++;
            return;
          }
          throw readError;
        }
      }
    }
  };

  let cont: string | undefined;
  let page = 0;
  do {
    let list: { items?: StoredObject[]; metadata?: { continue?: string } };
    try {
      list = await rest.request('GET', `${base}/${names.plural}`, { query: { limit: String(pageSize), continue: cont } });
    } catch (error) {
      // An expired continue token (410): start over; objects already rewritten are no-ops.
      if (error instanceof KubeApiError && error.code === 410 && cont) {
        out(`  the list expired after page ${page}; starting the list again (rewritten objects are not written twice)`);
        cont = undefined;
        continue;
      }
      throw error;
    }
    page++;
    await inParallel(list.items ?? [], concurrency, rewrite);
    cont = list.metadata?.continue || undefined;
    const seconds = (Date.now() - started) / 1000;
    out(`  page ${page}: ${rewritten} rewritten, ${gone} gone, ${conflicts} conflicts retried, ${failed.length} failed (${(rewritten / Math.max(seconds, 0.001)).toFixed(0)} objects/s)`);
  } while (cont);

  let trimmed = false;
  if (failed.length === 0) trimmed = await trimStoredVersions(rest, name, storageVersion, out);
  return { crd: name, storageVersion, storedBefore, rewritten, gone, conflicts, failed, trimmed, seconds: (Date.now() - started) / 1000 };
}

/** Sets status.storedVersions to [storageVersion] if the storage version is still that one; conditional on what it read. */
async function trimStoredVersions(rest: KubeRest, name: string, storageVersion: string, out: (line: string) => void): Promise<boolean> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const crd = await readCrd(rest, name);
    if (storageVersionOf(crd) !== storageVersion) {
      out(`  the storage version of ${name} changed to ${storageVersionOf(crd)} during the run; run the migration again`);
      return false;
    }
    const stored = crd.status?.storedVersions ?? [];
    if (stored.length === 1 && stored[0] === storageVersion) return true;
    try {
      await rest.request('PATCH', `${CRD_PATH}/${name}/status`, {
        contentType: 'application/json-patch+json',
        body: [
          { op: 'test', path: '/status/storedVersions', value: stored },
          { op: 'replace', path: '/status/storedVersions', value: [storageVersion] },
        ],
      });
      out(`  status.storedVersions: [${stored.join(', ')}] -> [${storageVersion}]`);
      return true;
    } catch (error) {
      // A concurrent writer of the CRD status: read again.
      if (error instanceof KubeApiError && (error.code === 409 || error.code === 422)) continue;
      throw error;
    }
  }
  return false;
}

function positiveInteger(flag: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new UsageError(`storage migrate: --${flag} is "${text}"; give a whole number of 1 or more`);
  return value;
}

/** `nls storage <action>` as the dispatcher calls it; returns the exit code. */
export async function runStorage(args: string[], out: (line: string) => void = commandOutput, kubeConfig?: k8s.KubeConfig): Promise<number> {
  const [action, ...rest] = args;
  let crdName: string;
  let options: MigrateOptions;
  let client: KubeRest;
  let dryRun: boolean;
  try {
    if (action !== 'migrate') throw new UsageError(`storage: unknown action "${action ?? ''}"; the only action is migrate\n${storageUsage}`);
    const flags = parseFlags('storage migrate', rest, {
      crd: { type: 'string' },
      'page-size': { type: 'string' },
      concurrency: { type: 'string' },
      kubeconfig: { type: 'string' },
      context: { type: 'string' },
      'dry-run': { type: 'boolean' },
    });
    if (flags.positionals.length > 0) throw new UsageError(`storage migrate: unexpected argument "${flags.positionals[0]}"; name the CRD with --crd`);
    if (!flags.values.crd) throw new UsageError(`storage migrate: --crd is required, e.g. --crd llmmodels.llm.nebari.dev\n${storageUsage}`);
    crdName = flags.values.crd;
    dryRun = flags.values['dry-run'] === true;
    options = { pageSize: positiveInteger('page-size', flags.values['page-size'], 200), concurrency: positiveInteger('concurrency', flags.values.concurrency, 8), out };
    client = new KubeRest(kubeConfig ?? kubeConfigFrom(flags.values.kubeconfig, flags.values.context));
  } catch (error) {
    if (error instanceof UsageError) {
      out(error.message);
      return ExitCode.usage;
    }
    throw error;
  }
  try {
    if (dryRun) {
      const crd = await readCrd(client, crdName);
      out(`would rewrite every ${crd.spec.names.kind} in ${storageVersionOf(crd)} and set status.storedVersions [${(crd.status?.storedVersions ?? []).join(', ')}] -> [${storageVersionOf(crd)}]`);
      return ExitCode.ok;
    }
    out(`storage migrate ${crdName}:`);
    const result = await migrateStorage(client, crdName, options);
    out(
      `${result.crd}: ${result.rewritten} objects rewritten in ${result.storageVersion} in ${result.seconds.toFixed(1)} s ` +
        `(${(result.rewritten / Math.max(result.seconds, 0.001)).toFixed(0)} objects/s), ${result.gone} deleted meanwhile, ${result.conflicts} conflicts retried`,
    );
    if (result.failed.length > 0) {
      out(`${result.failed.length} objects could not be rewritten, so status.storedVersions keeps [${result.storedBefore.join(', ')}]; fix them and run again:`);
      for (const line of result.failed.slice(0, 20)) out(`  ${line}`);
      return ExitCode.phaseFailed;
    }
    if (!result.trimmed) {
      out(`status.storedVersions was not trimmed; run again`);
      return ExitCode.phaseFailed;
    }
    out(`status.storedVersions is [${result.storageVersion}]`);
    return ExitCode.ok;
  } catch (error) {
    if (error instanceof RefusedError) {
      out(error.message);
      return ExitCode.refused;
    }
    throw error;
  } finally {
    client.close();
  }
}
