// `nls verify`: the post-install checks as a table — CRDs Established, the operator rolled out
// and ready, the webhook Service backed by ready endpoints, every webhook's caBundle equal to the
// serving CA, no upgrade guard left behind, and our gateway objects accepted where a controller
// wrote a status; with --images, the desired version and the running pods' images (./verify-images).
// Reads only; exit 5 when any check fails.
import { KIND_DEFINITIONS } from '../../api/kinds';
import { API_GROUP } from '../../api/common';
import { APP_NAME } from '../../translate/gateway/labels';
import { GATEWAY_OBJECT_KINDS } from '../../translate/gateway/objects';
import { KubeRest, type KubeObject, isNotFound } from '../../kube/rest';
import { kubeConfigFrom } from './crds';
import { parseFlags } from '../flags';
import { type Installation, findInstallation } from './installation';
import { CHART_NAME } from './guarded-phases';
import type { Check, CheckResult } from './check';
import { ExitCode, UsageError } from '../phases';
import { imageChecks, readImageFacts } from './verify-images';
import { observeRollout, serviceEndpoints, servingCa, webhookEntries } from './wait';
import { commandOutput } from '../output';

export const verifyUsage = `Usage:
  nls verify [--release NAME] [--namespace NS] [--kubeconfig PATH] [--context NAME] [--output text|json]
             [--images [--argocd-application NAMESPACE/NAME]]
Checks an installation (Helm, Argo CD or plain manifests) and prints a table; exit 0 when every
check passes, 5 when one fails. Changes nothing.
  --images              also check that the desired version and the running pods agree: the chart
                        version and appVersion of the operator Deployment, the image the chart
                        values name, the image digest every operator pod runs, and that it is
                        the image the chart was released with
  --argocd-application NAMESPACE/NAME
                        also check that the Argo CD Application's targetRevision for the chart
                        (spec.source or spec.sources[]) is the version running (implies --images)`;

export type { Check, CheckResult } from './check';

/** The table, columns padded; one row per check. */
export function formatChecks(checks: readonly Check[]): string[] {
  const width = Math.max('CHECK'.length, ...checks.map((c) => c.check.length));
  return [`${'CHECK'.padEnd(width)}  RESULT  DETAIL`, ...checks.map((c) => `${c.check.padEnd(width)}  ${c.result.toUpperCase().padEnd(6)}  ${c.detail}`)];
}

export function verifyExitCode(checks: readonly Check[]): number {
  return checks.some((c) => c.result === 'fail') ? ExitCode.checksFailed : ExitCode.ok;
}

type Obj = KubeObject & { metadata: { name: string; namespace?: string }; status?: Record<string, unknown> };
type Condition = { type: string; status: string; reason?: string; message?: string };

/** Conditions wherever a gateway controller writes them: status, status.parents[], status.ancestors[]. */
export function statusConditions(obj: { status?: Record<string, unknown> }): Condition[] {
  const status = obj.status ?? {};
  const nested = ['parents', 'ancestors'].flatMap((key) => ((status[key] as { conditions?: Condition[] }[] | undefined) ?? []).flatMap((p) => p.conditions ?? []));
  return [...((status.conditions as Condition[] | undefined) ?? []), ...nested];
}

/** Accepted=False anywhere fails; no Accepted condition at all means no controller has looked (skip). */
export function acceptance(obj: { status?: Record<string, unknown> }): CheckResult {
  const accepted = statusConditions(obj).filter((c) => c.type === 'Accepted');
  if (accepted.length === 0) return 'skip';
  return accepted.every((c) => c.status === 'True') ? 'pass' : 'fail';
}

/** The gateway kinds the operator generates (and the HTTPRoutes made from them), checked where a status exists. */
export const GATEWAY_KINDS: readonly { apiVersion: string; kind: string }[] = [{ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute' }, ...GATEWAY_OBJECT_KINDS];

async function crdChecks(rest: KubeRest): Promise<Check[]> {
  const checks: Check[] = [];
  for (const def of KIND_DEFINITIONS) {
    const name = `${def.plural}.${API_GROUP}`;
    const crd = (await rest.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name } })) as
      | (Obj & { status?: { conditions?: Condition[] } })
      | undefined;
    const established = crd?.status?.conditions?.find((c) => c.type === 'Established');
    checks.push({
      check: `CRD ${name}`,
      result: established?.status === 'True' ? 'pass' : 'fail',
      detail: !crd ? 'not installed; run nls crds apply' : established?.status === 'True' ? 'Established' : `not Established (${established?.message ?? 'no condition yet'})`,
    });
  }
  return checks;
}

type ConversionCrd = Obj & {
  spec: { conversion?: { strategy?: string; webhook?: { clientConfig?: { url?: string; service?: { name?: string; namespace?: string }; caBundle?: string } } }; versions: { name: string; storage: boolean }[] };
  status?: { storedVersions?: string[] };
};

/** Each CRD converts through this release's webhook with its CA, and stores only its storage version. */
async function conversionChecks(rest: KubeRest, inst: Installation, ca: string | undefined): Promise<Check[]> {
  const checks: Check[] = [];
  for (const def of KIND_DEFINITIONS) {
    const name = `${def.plural}.${API_GROUP}`;
    const crd = (await rest.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name } })) as ConversionCrd | undefined;
    if (!crd) continue;
    const conversion = crd.spec.conversion;
    const service = conversion?.webhook?.clientConfig?.service;
    const ours = service?.name === inst.webhookService && service.namespace === inst.namespace;
    checks.push({
      check: `conversion ${def.plural}`,
      result: conversion?.strategy === 'Webhook' && (!ours || conversion.webhook?.clientConfig?.caBundle === ca) ? 'pass' : 'fail',
      detail:
        conversion?.strategy !== 'Webhook'
          ? `strategy ${conversion?.strategy ?? 'None'}: the operator writes spec.conversion when it starts; is it Ready?`
          : !ours
            ? service
              ? `served by another release's Service ${service.namespace}/${service.name}`
              : `served by ${conversion.webhook?.clientConfig?.url ?? 'an unnamed webhook'}`
            : conversion.webhook?.clientConfig?.caBundle === ca
              ? `through ${inst.namespace}/${inst.webhookService}, trusting the serving CA`
              : `caBundle differs from the serving CA in ${inst.webhookSecret}`,
    });
    const storage = crd.spec.versions.find((v) => v.storage)?.name;
    const older = (crd.status?.storedVersions ?? []).filter((v) => v !== storage);
    checks.push({
      check: `stored versions ${def.plural}`,
      result: older.length === 0 ? 'pass' : 'skip',
      detail: older.length === 0 ? `only ${storage}` : `objects may still be stored as ${older.join(', ')}: nls storage migrate --crd ${name}`,
    });
  }
  return checks;
}

async function installationChecks(rest: KubeRest, inst: Installation): Promise<Check[]> {
  const checks: Check[] = [];
  const rollout = await observeRollout(rest, inst.namespace, inst.deployment, inst.webhookService);
  checks.push({ check: 'operator ready', result: rollout.done ? 'pass' : 'fail', detail: rollout.status });
  const endpoints = await serviceEndpoints(rest, inst.namespace, inst.webhookService);
  const ready = endpoints.filter((e) => e.ready);
  checks.push({
    check: 'webhook endpoints',
    result: ready.length > 0 ? 'pass' : 'fail',
    detail: `Service ${inst.webhookService}: ${ready.length} ready of ${endpoints.length} endpoint(s)`,
  });
  const ca = await servingCa(rest, inst.namespace, inst.webhookSecret);
  const entries = await webhookEntries(rest, inst.webhookConfigurations);
  const stale = entries.filter((e) => e.caBundle !== ca);
  checks.push({
    check: 'webhook caBundle',
    result: ca && entries.length > 0 && stale.length === 0 ? 'pass' : 'fail',
    detail: !ca
      ? `Secret ${inst.webhookSecret} has no ca.crt yet (the operator or cert-manager writes it)`
      : entries.length === 0
        ? `no webhook configurations named ${inst.webhookConfigurations.join(', ')}`
        : stale.length > 0
          ? `caBundle differs from the serving CA in ${stale.map((e) => `${e.configuration}/${e.name}`).join(', ')}`
          : `all ${entries.length} webhooks trust the serving CA in ${inst.webhookSecret}`,
  });
  checks.push(...(await conversionChecks(rest, inst, ca)));
  const guard = await rest.get({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: inst.guard } });
  checks.push({
    check: 'no upgrade guard',
    result: guard ? 'fail' : 'pass',
    detail: guard ? `${inst.guard} is installed, so AgentDeployment writes are denied; finish the upgrade (nls upgrade ... --resume-from unguard)` : `${inst.guard} is absent`,
  });
  return checks;
}

async function gatewayChecks(rest: KubeRest): Promise<Check[]> {
  const checks: Check[] = [];
  for (const { apiVersion, kind } of GATEWAY_KINDS) {
    let items: Obj[];
    try {
      items = (await rest.list<Obj>(apiVersion, kind, { labelSelector: `app.kubernetes.io/managed-by=${APP_NAME}` })).items;
    } catch (error) {
      if (isNotFound(error)) {
        checks.push({ check: `${kind} accepted`, result: 'skip', detail: `${apiVersion} is not served (gateway CRDs not installed)` });
        continue;
      }
      throw error;
    }
    const results = items.map((o) => ({ o, r: acceptance(o) }));
    const failed = results.filter((x) => x.r === 'fail');
    const passed = results.filter((x) => x.r === 'pass').length;
    const noStatus = results.filter((x) => x.r === 'skip').length;
    checks.push({
      check: `${kind} accepted`,
      result: failed.length > 0 ? 'fail' : passed > 0 ? 'pass' : 'skip',
      detail:
        failed.length > 0
          ? `not accepted: ${failed.map((x) => `${x.o.metadata.namespace}/${x.o.metadata.name} (${statusConditions(x.o).find((c) => c.type === 'Accepted' && c.status !== 'True')?.message ?? ''})`).join('; ')}`
          : `${passed} accepted, ${noStatus} without status, of ${items.length}`,
    });
  }
  return checks;
}

/** What `--images` adds: the image checks, and the Argo CD Application `NAMESPACE/NAME` to compare. */
export interface ImageOptions {
  readonly argocdApplication?: string;
}

/** Every check of an installation; with `images`, also the desired-versus-running image checks. */
export async function verifyInstallation(rest: KubeRest, release: string, namespace: string, images?: ImageOptions): Promise<Check[]> {
  const checks = await crdChecks(rest);
  const inst = await findInstallation(rest, release, namespace);
  if (!inst) {
    checks.push({ check: 'operator ready', result: 'fail', detail: `no operator Deployment of release ${release} in ${namespace}; check --release and --namespace` });
  } else {
    checks.push(...(await installationChecks(rest, inst)));
    if (images) checks.push(...imageChecks(await readImageFacts(rest, inst, images.argocdApplication)));
  }
  checks.push(...(await gatewayChecks(rest)));
  return checks;
}

/** `nls verify ...`; returns the exit code. */
export async function runVerify(args: string[], out: (line: string) => void = commandOutput): Promise<number> {
  let rest: KubeRest;
  let release: string;
  let namespace: string;
  let output: string;
  let images: ImageOptions | undefined;
  try {
    const flags = parseFlags('verify', args, {
      release: { type: 'string' },
      namespace: { type: 'string' },
      kubeconfig: { type: 'string' },
      context: { type: 'string' },
      output: { type: 'string' },
      images: { type: 'boolean' },
      'argocd-application': { type: 'string' },
    });
    const application = flags.values['argocd-application'];
    if (application !== undefined && !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-.a-z0-9]*[a-z0-9])?$/.test(application)) {
      throw new UsageError(`verify: --argocd-application "${application}" is not NAMESPACE/NAME; write e.g. argocd/nebari-llm-serving`);
    }
    images = flags.values.images || application !== undefined ? { argocdApplication: application } : undefined;
    if (flags.positionals.length > 0) throw new UsageError(`verify: unexpected argument "${flags.positionals[0]}"\n${verifyUsage}`);
    output = flags.values.output ?? 'text';
    if (output !== 'text' && output !== 'json') throw new UsageError(`verify: --output "${output}" is not supported; use text or json`);
    release = flags.values.release ?? CHART_NAME;
    namespace = flags.values.namespace ?? `${CHART_NAME}-system`;
    rest = new KubeRest(kubeConfigFrom(flags.values.kubeconfig, flags.values.context));
  } catch (error) {
    out(`error: ${(error as Error).message}`);
    return error instanceof UsageError ? ExitCode.usage : ExitCode.error;
  }
  try {
    const checks = await verifyInstallation(rest, release, namespace, images);
    if (output === 'json') out(JSON.stringify(checks, null, 2));
    else for (const line of formatChecks(checks)) out(line);
    return verifyExitCode(checks);
  } catch (error) {
    out(`error: ${(error as Error).message}`);
    return ExitCode.error;
  } finally {
    rest.close();
  }
}
