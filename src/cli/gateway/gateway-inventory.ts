// `nls gateway inventory`: every object on the Gateways the pack attaches to, ours and others',
// with owner, the stored API versions of its CRD, legacy AI Gateway 0.5 fields and our objects
// the AI Gateway controller has not finalized. `--save FILE` keeps it for a rollback to compare
// against with `--compare FILE`. Reads only.
import * as fs from 'node:fs';
import type { KubeRest } from '../../kube/rest';
import { readGatewayObjects, GATEWAY_TARGET_USAGE, parseGatewayCommand } from './gateway-cluster';
import { gatewayInventory, objectName, type GatewayName, type InventoryEntry, type KindStorage } from './gateway-objects';
import { ExitCode, UsageError } from '../phases';
import { commandOutput } from '../output';

export const gatewayInventoryUsage = `Usage:
  nls gateway inventory [--output text|json] [--save FILE] [--compare FILE] [--gateway NS/NAME]... [--release NAME] [--namespace NS]
Lists every object on the pack's Gateways (routes of every kind, policies, backends, EnvoyProxy,
GatewayConfig), its owner, the stored API versions of its CRD, legacy AI Gateway 0.5 fields
(spec.schema.version on OpenAI AIServiceBackends, AIGatewayRoute spec.filterConfig) and objects of
ours without the AI Gateway cleanup finalizer. Changes nothing.
  --output text|json  how to print (default text)
  --save FILE         also write the inventory as JSON, for a later --compare
  --compare FILE      compare with a saved inventory: objects that appeared, disappeared or
                      changed (spec, labels/annotations/finalizers/owners, re-created); exit 5 when
                      anything differs
${GATEWAY_TARGET_USAGE}`;

/** What `--save` writes and `--compare` reads. */
export interface InventorySnapshot {
  readonly format: 'nls-gateway-inventory/v1';
  readonly takenAt: string;
  readonly gateways: readonly (GatewayName & { readonly found: boolean })[];
  /** The CRDs of the kinds found, with their storage and stored versions. */
  readonly crds: readonly KindStorage[];
  /** Each object with the `status.storedVersions` of its kind's CRD. */
  readonly objects: readonly (InventoryEntry & { readonly storedVersions: readonly string[] })[];
}

export const ROLL_AI_GATEWAY_CONTROLLER =
  'roll the AI Gateway controller so it adds its cleanup finalizer again: kubectl -n envoy-ai-gateway-system rollout restart deployment/ai-gateway-controller';

/** Takes the inventory of `gateways` now. */
export async function takeInventory(rest: KubeRest, gateways: readonly GatewayName[], now = new Date()): Promise<InventorySnapshot> {
  const { storage, objects } = await readGatewayObjects(rest);
  const inventory = gatewayInventory({ gateways, objects });
  const kinds = new Set(inventory.entries.map((e) => e.kind));
  return {
    format: 'nls-gateway-inventory/v1',
    takenAt: now.toISOString(),
    gateways: inventory.gateways,
    crds: storage.filter((s) => s.installed && (kinds.has(s.kind) || s.storedVersions.length > 1)),
    objects: inventory.entries.map((e) => ({ ...e, storedVersions: storage.find((s) => s.kind === e.kind)?.storedVersions ?? [] })),
  };
}

const entryName = (e: { kind: string; namespace?: string; name: string }) => objectName(e.kind, e.namespace, e.name);

/** The report for people. */
export function formatInventory(s: InventorySnapshot): string[] {
  const lines = [`Gateways: ${s.gateways.map((g) => `${g.namespace}/${g.name}${g.found ? '' : ' (not found)'}`).join(', ')}`, ''];
  const rows = s.objects.map((e) => [
    e.kind,
    e.namespace ? `${e.namespace}/${e.name}` : e.name,
    e.owner === 'other' && e.managers.length ? `other (${e.managers.join(', ')})` : e.owner,
    (e.storedVersions ?? []).join(',') || '-',
    e.via.join('; '),
  ]);
  const header = ['KIND', 'NAME', 'OWNER', 'STORED', 'ATTACHED TO'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  for (const row of [header, ...rows]) lines.push(row.map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i]))).join('  '));
  lines.push('', 'CRDs (storage version; versions objects may still be stored in):');
  for (const c of s.crds) {
    const pending = c.storedVersions.filter((v) => v !== c.storageVersion);
    lines.push(
      `  ${c.crd}: ${c.storageVersion ?? '?'}; stored ${c.storedVersions.join(', ') || '-'}` +
        (pending.length ? ` (objects written before may still be stored as ${pending.join(', ')}: re-apply them before any CRD drops that version)` : ''),
    );
  }
  const legacy = s.objects.filter((e) => e.legacy.length > 0);
  const unfinalized = s.objects.filter((e) => e.missingFinalizer);
  lines.push('');
  if (legacy.length === 0) lines.push('Legacy fields: none.');
  else {
    lines.push(`Legacy fields (${legacy.length} objects):`);
    for (const e of legacy) for (const l of e.legacy) lines.push(`  ${entryName(e)}: ${l}`);
  }
  if (unfinalized.length === 0) lines.push('Cleanup finalizers: every object of ours has the AI Gateway finalizer (or is not one it finalizes).');
  else {
    lines.push(`Cleanup finalizers missing on ${unfinalized.length} objects of ours: ${unfinalized.map(entryName).join(', ')}`);
    lines.push(`  ${ROLL_AI_GATEWAY_CONTROLLER}`);
  }
  return lines;
}

export interface InventoryDifference {
  readonly appeared: readonly string[];
  readonly disappeared: readonly string[];
  /** Object → what changed (`spec`, `metadata`, `re-created`, `owner`). */
  readonly changed: readonly { readonly object: string; readonly what: readonly string[] }[];
  /** CRDs whose storage or stored versions moved. */
  readonly crds: readonly string[];
}

/** What differs between two inventories; resourceVersions and status never count. */
export function compareInventories(before: InventorySnapshot, after: InventorySnapshot): InventoryDifference {
  const key = (e: InventoryEntry) => `${e.apiVersion.split('/')[0]}|${entryName(e)}`;
  const old = new Map(before.objects.map((e) => [key(e), e]));
  const now = new Map(after.objects.map((e) => [key(e), e]));
  const changed: { object: string; what: string[] }[] = [];
  for (const [k, e] of now) {
    const o = old.get(k);
    if (!o) continue;
    const what: string[] = [];
    if (o.uid !== e.uid) what.push('re-created (new uid)');
    else {
      if (o.fingerprint.spec !== e.fingerprint.spec) what.push('spec');
      if (o.fingerprint.metadata !== e.fingerprint.metadata) what.push('labels, annotations, finalizers or owners');
    }
    if (o.owner !== e.owner) what.push(`owner ${o.owner} -> ${e.owner}`);
    if (what.length) changed.push({ object: entryName(e), what });
  }
  const crdLine = (c: KindStorage) => `${c.storageVersion ?? '-'}; stored ${c.storedVersions.join(', ') || '-'}`;
  const oldCrds = new Map(before.crds.map((c) => [c.crd, c]));
  const crds = after.crds.flatMap((c) => {
    const o = oldCrds.get(c.crd);
    return o && crdLine(o) !== crdLine(c) ? [`${c.crd}: ${crdLine(o)} -> ${crdLine(c)}`] : [];
  });
  return {
    appeared: [...now].filter(([k]) => !old.has(k)).map(([, e]) => entryName(e)),
    disappeared: [...old].filter(([k]) => !now.has(k)).map(([, e]) => entryName(e)),
    changed,
    crds,
  };
}

export const hasDifferences = (d: InventoryDifference) => d.appeared.length + d.disappeared.length + d.changed.length + d.crds.length > 0;

export function formatDifference(d: InventoryDifference, savedAt: string): string[] {
  if (!hasDifferences(d)) return [`No difference from the inventory taken at ${savedAt}.`];
  return [
    `Differences from the inventory taken at ${savedAt}:`,
    ...d.disappeared.map((o) => `  disappeared  ${o}`),
    ...d.appeared.map((o) => `  appeared     ${o}`),
    ...d.changed.map((c) => `  changed      ${c.object}: ${c.what.join(', ')}`),
    ...d.crds.map((c) => `  CRD          ${c}`),
  ];
}

/** Reads a `--save` file; a wrong file is named with what it is not. */
export function readSnapshot(file: string): InventorySnapshot {
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new UsageError(`--compare ${file}: cannot read it as JSON (${(err as Error).message}); give a file written by nls gateway inventory --save`);
  }
  if ((parsed as { format?: unknown }).format !== 'nls-gateway-inventory/v1') {
    throw new UsageError(`--compare ${file}: not an inventory (its "format" is not nls-gateway-inventory/v1); give a file written by nls gateway inventory --save`);
  }
  return parsed as InventorySnapshot;
}

/** `nls gateway inventory …`; returns the exit code. */
export async function runGatewayInventory(args: string[], out: (line: string) => void = commandOutput): Promise<number> {
  let parsed;
  let saved: InventorySnapshot | undefined;
  try {
    parsed = parseGatewayCommand('gateway inventory', args, { output: { type: 'string' }, save: { type: 'string' }, compare: { type: 'string' } });
    const output = parsed.values.output ?? 'text';
    if (output !== 'text' && output !== 'json') throw new UsageError(`gateway inventory: --output "${output}" is not supported; use text or json`);
    if (parsed.values.compare) saved = readSnapshot(parsed.values.compare);
  } catch (error) {
    out(`error: ${(error as Error).message}`);
    return error instanceof UsageError ? ExitCode.usage : ExitCode.error;
  }
  const { values, rest } = parsed;
  try {
    const target = await parsed.target();
    const snapshot = await takeInventory(rest, target.gateways);
    if (values.save) fs.writeFileSync(values.save, JSON.stringify(snapshot, null, 2) + '\n');
    if (saved) {
      const difference = compareInventories(saved, snapshot);
      if (values.output === 'json') out(JSON.stringify(difference, null, 2));
      else for (const line of formatDifference(difference, saved.takenAt)) out(line);
      return hasDifferences(difference) ? ExitCode.checksFailed : ExitCode.ok;
    }
    if (values.output === 'json') out(JSON.stringify(snapshot, null, 2));
    else for (const line of formatInventory(snapshot)) out(line);
    if (values.save && values.output !== 'json') out(`\nSaved to ${values.save}; compare later with: nls gateway inventory --compare ${values.save}`);
    return ExitCode.ok;
  } catch (error) {
    out(`error: ${(error as Error).message}`);
    return error instanceof UsageError ? ExitCode.usage : ExitCode.error;
  } finally {
    rest.close();
  }
}
