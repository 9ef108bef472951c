// `nls gateway migrate`: the seed's step 3 before crossing AI Gateway 0.6, for objects on the
// pack's Gateways. Moves `spec.schema.version` to `spec.schema.prefix` on OpenAI AIServiceBackends
// the pack does not own (AI Gateway <= 0.5 used version as the path prefix; 0.6+ reads only prefix;
// the operator rewrites its own), and writes the GatewayConfig equivalent of an AIGatewayRoute's
// `spec.filterConfig` (removed in 0.6) before removing that field. A dry run with a diff unless
// `--apply`; every write is conditional on the value it replaces, so a second run finds nothing.
import type { KubeObject, KubeRest } from '../../kube/rest';
import { apiVersionOf, GATEWAY_TARGET_USAGE, parseGatewayCommand, readGatewayObjects } from './gateway-cluster';
import {
  GATEWAY_CONFIG_ANNOTATION,
  INVENTORY_KINDS,
  gatewayInventory,
  objectName,
  ownerOf,
  stableJson,
  type GatewayName,
  type KindStorage,
} from './gateway-objects';
import { ExitCode, UsageError } from '../phases';
import { commandOutput } from '../output';

export const gatewayMigrateUsage = `Usage:
  nls gateway migrate [--apply] [--gateway NS/NAME]... [--release NAME] [--namespace NS]
Moves legacy AI Gateway 0.5 fields on the objects of the pack's Gateways (run it before the AI
Gateway controller crosses 0.6, while the 0.5 CRDs still hold these fields):
  - spec.schema.version -> spec.schema.prefix on OpenAI AIServiceBackends the pack does not own
    (the pack's operator rewrites its own);
  - AIGatewayRoute spec.filterConfig.externalProcessor.resources -> a GatewayConfig
    (spec.extProc.kubernetes.resources) named by the Gateway's ${GATEWAY_CONFIG_ANNOTATION}
    annotation (set to <gateway>-ai-gateway when absent); then removes spec.filterConfig.
Without --apply it prints the changes as a diff and changes nothing. Objects it cannot migrate
safely (a different prefix already set, routes of one Gateway asking for different resources, a
DynamicModule filter) are listed and left alone. Running it again after --apply finds nothing.
  --apply             make the changes
${GATEWAY_TARGET_USAGE}`;

export const MIGRATE_FIELD_MANAGER = 'nls-gateway-migrate';

type Obj = KubeObject & { spec?: Record<string, unknown> };
type Resources = Record<string, unknown>;

/** One write, with the diff lines that describe it. */
export interface MigrationChange {
  readonly object: string;
  readonly diff: readonly string[];
  readonly write:
    | { readonly type: 'json-patch'; readonly ref: Obj; readonly ops: readonly unknown[] }
    | { readonly type: 'apply-gateway-config'; readonly apiVersion: string; readonly namespace: string; readonly name: string; readonly resources: Resources }
    | { readonly type: 'annotate-gateway'; readonly ref: Obj; readonly configName: string };
}

export interface MigrationPlan {
  readonly changes: readonly MigrationChange[];
  /** Legacy fields left alone, with why and what to do. */
  readonly skipped: readonly string[];
}

const show = (v: unknown) => (v === undefined ? '(unset)' : JSON.stringify(v));
const withoutSlash = (p: string) => p.replace(/^\/+/, '');
const name = (o: Obj) => objectName(o.kind, o.metadata.namespace, o.metadata.name);
const ref = (o: Obj): Obj => ({ apiVersion: o.apiVersion, kind: o.kind, metadata: { name: o.metadata.name, namespace: o.metadata.namespace } });

function schemaChange(asb: Obj, skipped: string[]): MigrationChange | undefined {
  const schema = (asb.spec?.schema ?? {}) as { name?: string; version?: string; prefix?: string };
  if (schema.name !== 'OpenAI' || schema.version === undefined) return undefined;
  if (ownerOf(asb) === 'operator') {
    skipped.push(`${name(asb)}: spec.schema.version is set, but the pack's operator owns it and rewrites it to spec.schema.prefix when the new operator reconciles`);
    return undefined;
  }
  const test = { op: 'test', path: '/spec/schema/version', value: schema.version };
  const remove = { op: 'remove', path: '/spec/schema/version' };
  if (schema.prefix !== undefined) {
    if (withoutSlash(schema.prefix) !== withoutSlash(schema.version)) {
      skipped.push(`${name(asb)}: spec.schema.version "${schema.version}" and spec.schema.prefix "${schema.prefix}" differ; AI Gateway 0.6+ uses the prefix. Remove spec.schema.version by hand once the prefix is the path you want`);
      return undefined;
    }
    return { object: name(asb), diff: [`- spec.schema.version: ${show(schema.version)}`], write: { type: 'json-patch', ref: ref(asb), ops: [test, remove] } };
  }
  return {
    object: name(asb),
    diff: [`- spec.schema.version: ${show(schema.version)}`, `+ spec.schema.prefix: ${show(schema.version)}`],
    write: { type: 'json-patch', ref: ref(asb), ops: [test, { op: 'add', path: '/spec/schema/prefix', value: schema.version }, remove] },
  };
}

interface FilterConfig {
  type?: string;
  externalProcessor?: { resources?: Resources };
}

/**
 * The changes for the filterConfigs of the routes on one Gateway: the GatewayConfig with their
 * resources (when they set any), the Gateway annotation naming it, then removing each filterConfig.
 */
function filterConfigChanges(gateway: Obj, routes: Obj[], configs: Obj[], configApiVersion: string | undefined, skipped: string[]): MigrationChange[] {
  const withFilter = routes.filter((r) => r.spec?.filterConfig !== undefined);
  if (withFilter.length === 0) return [];
  const dynamic = withFilter.filter((r) => ((r.spec!.filterConfig as FilterConfig).type ?? 'ExternalProcessor') !== 'ExternalProcessor');
  for (const r of dynamic) skipped.push(`${name(r)}: spec.filterConfig.type ${(r.spec!.filterConfig as FilterConfig).type} has no GatewayConfig equivalent (AI Gateway 0.6+ always runs the external processor); remove spec.filterConfig by hand`);
  const movable = withFilter.filter((r) => !dynamic.includes(r));
  const asked = movable.flatMap((r) => {
    const resources = (r.spec!.filterConfig as FilterConfig).externalProcessor?.resources;
    return resources === undefined ? [] : [{ route: r, resources }];
  });
  const distinct = [...new Set(asked.map((a) => stableJson(a.resources)))];
  const gw = name(gateway);
  if (distinct.length > 1) {
    skipped.push(`${gw}: its routes ask for different external processor resources (${asked.map((a) => `${name(a.route)} ${JSON.stringify(a.resources)}`).join('; ')}); AI Gateway 0.5 used one of them. Make them agree, or write the GatewayConfig by hand`);
    return [];
  }
  const changes: MigrationChange[] = [];
  if (distinct.length === 1) {
    const resources = asked[0].resources;
    if (!configApiVersion) {
      skipped.push(`${gw}: the GatewayConfig CRD is not installed, so the routes' external processor resources have nowhere to go; install the AI Gateway CRDs of your current release`);
      return [];
    }
    const annotated = gateway.metadata.annotations?.[GATEWAY_CONFIG_ANNOTATION];
    const configName = annotated ?? `${gateway.metadata.name}-ai-gateway`;
    const existing = configs.find((c) => c.metadata.namespace === gateway.metadata.namespace && c.metadata.name === configName);
    const current = ((existing?.spec?.extProc as { kubernetes?: { resources?: Resources } } | undefined)?.kubernetes ?? {}).resources;
    if (current !== undefined && stableJson(current) !== stableJson(resources)) {
      skipped.push(`${gw}: GatewayConfig ${gateway.metadata.namespace}/${configName} already sets spec.extProc.kubernetes.resources ${JSON.stringify(current)}, not the routes' ${JSON.stringify(resources)}; decide which to keep, then remove spec.filterConfig by hand`);
      return [];
    }
    if (current === undefined) {
      changes.push({
        object: `${objectName('GatewayConfig', gateway.metadata.namespace, configName)}${existing ? '' : ' (new)'}`,
        diff: [`+ spec.extProc.kubernetes.resources: ${JSON.stringify(resources)}`],
        write: { type: 'apply-gateway-config', apiVersion: configApiVersion, namespace: gateway.metadata.namespace!, name: configName, resources },
      });
    }
    if (!annotated) {
      changes.push({ object: gw, diff: [`+ metadata.annotations["${GATEWAY_CONFIG_ANNOTATION}"]: ${show(configName)}`], write: { type: 'annotate-gateway', ref: ref(gateway), configName } });
    }
  }
  for (const r of movable) {
    const value = r.spec!.filterConfig;
    changes.push({ object: name(r), diff: [`- spec.filterConfig: ${JSON.stringify(value)}`], write: { type: 'json-patch', ref: ref(r), ops: [{ op: 'test', path: '/spec/filterConfig', value }, { op: 'remove', path: '/spec/filterConfig' }] } });
  }
  return changes;
}

/** The migration of the objects on `gateways` (pure: from listed objects and CRD facts). */
export function migrationPlan(gateways: readonly GatewayName[], objects: readonly Obj[], storage: readonly KindStorage[]): MigrationPlan {
  const inventory = gatewayInventory({ gateways, objects });
  const byUid = new Map(objects.map((o) => [o.metadata.uid, o]));
  const onGateways = inventory.entries.map((e) => byUid.get(e.uid)).filter((o): o is Obj => !!o);
  const skipped: string[] = [];
  const changes: MigrationChange[] = [];
  for (const asb of onGateways.filter((o) => o.kind === 'AIServiceBackend')) {
    const change = schemaChange(asb, skipped);
    if (change) changes.push(change);
  }
  const configKind = INVENTORY_KINDS.find((k) => k.kind === 'GatewayConfig')!;
  const configStorage = storage.find((s) => s.kind === 'GatewayConfig');
  const configApiVersion = configStorage ? apiVersionOf(configKind, configStorage) : undefined;
  const configs = objects.filter((o) => o.kind === 'GatewayConfig');
  const routes = onGateways.filter((o) => o.kind === 'AIGatewayRoute');
  const seen = new Set<Obj>();
  for (const g of gateways) {
    const gateway = objects.find((o) => o.kind === 'Gateway' && o.metadata.namespace === g.namespace && o.metadata.name === g.name);
    if (!gateway) continue;
    // A route on two of the pack's Gateways is migrated with the first.
    const mine = routes.filter((r) => !seen.has(r) && inventory.entries.find((e) => e.uid === r.metadata.uid)?.via.includes(name(gateway)));
    for (const r of mine) seen.add(r);
    changes.push(...filterConfigChanges(gateway, mine, configs, configApiVersion, skipped));
  }
  return { changes, skipped };
}

export function formatPlan(plan: MigrationPlan, applied: boolean): string[] {
  const lines: string[] = [];
  if (plan.changes.length === 0) lines.push('Nothing to migrate.');
  else {
    lines.push(applied ? 'Changed:' : 'Would change (dry run; --apply makes these changes):');
    for (const c of plan.changes) lines.push(`${c.object}`, ...c.diff.map((d) => `  ${d}`));
  }
  if (plan.skipped.length) lines.push('', 'Left alone (needs a decision):', ...plan.skipped.map((s) => `  ${s}`));
  return lines;
}

/** Makes one change; a GatewayConfig is first applied as a dry run to prove the installed CRD keeps the field. */
async function write(rest: KubeRest, change: MigrationChange): Promise<void> {
  const w = change.write;
  if (w.type === 'json-patch') {
    await rest.jsonPatch(w.ref, [...w.ops], { fieldManager: MIGRATE_FIELD_MANAGER });
  } else if (w.type === 'annotate-gateway') {
    await rest.mergePatch(w.ref, { metadata: { annotations: { [GATEWAY_CONFIG_ANNOTATION]: w.configName } } }, { fieldManager: MIGRATE_FIELD_MANAGER });
  } else {
    const body = { apiVersion: w.apiVersion, kind: 'GatewayConfig', metadata: { name: w.name, namespace: w.namespace }, spec: { extProc: { kubernetes: { resources: w.resources } } } };
    const dry = await rest.apply<Obj>(body, { fieldManager: MIGRATE_FIELD_MANAGER, force: false, dryRun: true });
    const kept = ((dry.spec?.extProc as { kubernetes?: { resources?: unknown } } | undefined)?.kubernetes ?? {}).resources;
    if (stableJson(kept) !== stableJson(w.resources)) {
      throw new Error(`the installed GatewayConfig CRD (${w.apiVersion}) drops spec.extProc.kubernetes.resources, so ${change.object} cannot hold the routes' resources; install the AI Gateway CRDs of your current release, then run again`);
    }
    await rest.apply(body, { fieldManager: MIGRATE_FIELD_MANAGER, force: false });
  }
}

/** `nls gateway migrate …`; returns the exit code. */
export async function runGatewayMigrate(args: string[], out: (line: string) => void = commandOutput): Promise<number> {
  let parsed;
  try {
    parsed = parseGatewayCommand('gateway migrate', args, { apply: { type: 'boolean' } });
  } catch (error) {
    out(`error: ${(error as Error).message}`);
    return error instanceof UsageError ? ExitCode.usage : ExitCode.error;
  }
  const { rest, values } = parsed;
  try {
    const { gateways } = await parsed.target();
    const { storage, objects } = await readGatewayObjects(rest);
    const plan = migrationPlan(gateways, objects, storage);
    if (!values.apply || plan.changes.length === 0) {
      for (const line of formatPlan(plan, false)) out(line);
      return ExitCode.ok;
    }
    const done: MigrationChange[] = [];
    for (const change of plan.changes) {
      try {
        await write(rest, change);
        done.push(change);
      } catch (error) {
        for (const line of formatPlan({ changes: done, skipped: [] }, true)) out(line);
        out(`error: ${change.object}: ${(error as Error).message}`);
        out('Nothing after it was changed; fix the cause and run nls gateway migrate again (finished changes are not repeated).');
        return ExitCode.phaseFailed;
      }
    }
    for (const line of formatPlan(plan, true)) out(line);
    return ExitCode.ok;
  } catch (error) {
    out(`error: ${(error as Error).message}`);
    return error instanceof UsageError ? ExitCode.usage : ExitCode.error;
  } finally {
    rest.close();
  }
}
