// `nls rollback --to V`: the seed's rollback order. The guard comes from the release installed
// now and stays while the current chart removes both AgentDeployment routes and the operator
// rolls back to V; only once V's pods alone serve are V's routes (its legacy validator) restored,
// and the guard goes only after the serving CA is in every AgentDeployment webhook. CRDs are never
// rolled back: an older CRD could drop fields that stored objects use, and a CRD is never deleted.
import {
  CHART_NAME, type GuardedContext, type LifecycleArgs, type ReleaseTarget, activatePhase, controllerPhase, guardPhase, runLifecycle,
  lifecycleContext, parseLifecycleArgs, renderGuard, requirePublished, requireRelease, routesOffPhase, unguardPhase, withoutPhaseKeys, writeValuesFile,
} from './guarded-phases';
import { type CrdObject, loadCrds } from './crds';
import { chartVersionOf, type Helm, type ReleaseRevision } from './helm';
import { findInstallation } from './installation';
import { ExitCode, type Phase, RefusedError, UsageError } from '../phases';
import { commandOutput } from '../output';

export const rollbackUsage = `Usage:
  nls rollback --to V --chart oci://REGISTRY/PATH/nebari-llm-serving [options]
Rolls the release back to chart version V in the seed's order:
  guard        install the guard from the currently installed version
  routes-off   the current version with both AgentDeployment routes off (guard kept)
  controller   helm upgrade to V with the routes off; restart; wait until only V's pods serve
  activate     V with its routes on; wait for the serving CA in every AgentDeployment webhook
  unguard      remove the guard
CRDs stay as they are (never deleted, never downgraded).
Options:
  --release NAME, --namespace NS, -f/--values FILE (default: the values the release last ran V
  with), --plain-http, --kubeconfig PATH, --context NAME, --timeout DURATION (default 5m),
  --resume-from PHASE, --dry-run
Exit codes: 0 done, 2 bad arguments, 3 refused before any change, 4 a phase failed (resume).`;

export interface RollbackPlan {
  /** The revision being rolled back from (the newest one not running V). */
  readonly from: ReleaseRevision;
  /** The newest revision that ran V before `from`; its values are reused. */
  readonly previous?: ReleaseRevision;
}

/** Which revision is current and which earlier one ran `to`; refuses when there is nothing to roll back. */
export function rollbackPlan(history: readonly ReleaseRevision[], to: string, resuming: boolean): RollbackPlan {
  const last = history[history.length - 1];
  if (!resuming && chartVersionOf(last.chart) === to) {
    throw new RefusedError(`release revision ${last.revision} already runs ${last.chart}; nothing to roll back (resume an interrupted rollback with --resume-from)`);
  }
  const from = [...history].reverse().find((h) => chartVersionOf(h.chart) !== to);
  if (!from) throw new RefusedError(`every revision of the release runs ${to}; nothing to roll back`);
  const previous = [...history].reverse().find((h) => h.revision < from.revision && chartVersionOf(h.chart) === to);
  return { from, previous };
}

interface RollbackContext extends GuardedContext {
  readonly to: string;
  readonly userValueFiles: readonly string[];
  readonly resuming: boolean;
  /** The version installed now (guard and routes-off come from it). */
  current: ReleaseTarget;
  /** Version `to`. */
  readonly rollback: ReleaseTarget;
}

async function valuesOf(helm: Helm, c: RollbackContext, revision: number, label: string): Promise<string> {
  return writeValuesFile(withoutPhaseKeys(await helm.userValues(c.release, revision)), label);
}

/**
 * CRDs stay as they are, so the older operator must read what they store: refuse a rollback to a
 * chart whose CRDs do not have a version the installed CRDs store (0.1.x knows only v1alpha1 and
 * serves no conversion webhook, so it could not read objects stored as v1beta1).
 */
async function refuseUnknownStoredVersions(c: RollbackContext, note: (line: string) => void): Promise<void> {
  const older = await loadCrds({ chart: c.rollback.chart, version: c.to }, c.helm);
  for (const crd of older) {
    const live = (await c.rest.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: crd.metadata.name } })) as CrdObject | undefined;
    const known = new Set(crd.spec.versions.map((v) => v.name));
    const unknown = (live?.status?.storedVersions ?? []).filter((v) => !known.has(v));
    if (unknown.length > 0) {
      throw new RefusedError(
        `${crd.metadata.name} stores ${unknown.join(', ')}, which ${CHART_NAME} ${c.to} does not know (its CRD has ${[...known].join(', ')}); ` +
          `its operator could not read those objects. A rollback across an API storage change is not possible: fix forward, or restore from a backup`,
      );
    }
  }
  note(`the CRDs store only versions ${c.to} knows`);
}

function checkPhase(): Phase<RollbackContext> {
  return {
    name: 'check',
    title: 'find the current and the rollback revision; check both charts are available',
    waitsFor: 'helm show chart to find both versions',
    readOnly: true,
    actions: (c) => [
      `helm history ${c.release.name} -n ${c.release.namespace}: the current version, and the last revision that ran ${c.to}`,
      `helm show chart ${c.rollback.chart.ref} for the current version and for ${c.to}`,
      c.userValueFiles.length > 0 ? `values for ${c.to}: ${c.userValueFiles.join(', ')}` : `values for ${c.to}: the user-supplied values of the last revision that ran it`,
      'CRDs are left as they are (never deleted or downgraded); refuse if they store a version the rollback chart does not know',
    ],
    run: async (c, r) => {
      const helm = c.helm();
      const history = await requireRelease(helm, c.release);
      const plan = rollbackPlan(history, c.to, c.resuming);
      const currentVersion = chartVersionOf(plan.from.chart);
      r.note(`rolling back from revision ${plan.from.revision} (${plan.from.chart}) to ${CHART_NAME} ${c.to}`);
      if (c.userValueFiles.length === 0 && !plan.previous) {
        throw new RefusedError(`release ${c.release.name} never ran ${c.to} before revision ${plan.from.revision}, so there are no values to reuse; pass -f with the values for ${c.to}`);
      }
      await requirePublished(helm, c.rollback.chart, currentVersion);
      await requirePublished(helm, c.rollback.chart, c.to);
      c.current = { ...c.current, version: currentVersion, valueFiles: [await valuesOf(helm, c, plan.from.revision, 'current-values')] };
      if (c.userValueFiles.length === 0) {
        c.rollback.valueFiles = [await valuesOf(helm, c, plan.previous!.revision, 'rollback-values')];
        r.note(`values for ${c.to}: those of revision ${plan.previous!.revision}`);
      }
      c.guard = await renderGuard(helm, c.rest, c.release, c.current);
      if (!(await findInstallation(c.rest, c.release.name, c.release.namespace))) {
        throw new RefusedError(`release ${c.release.name} has no operator Deployment in ${c.release.namespace}; repair the release before rolling back`);
      }
      await refuseUnknownStoredVersions(c, r.note);
    },
  };
}

export function rollbackPhases(): Phase<RollbackContext>[] {
  const current = (c: RollbackContext) => c.current;
  const rollback = (c: RollbackContext) => c.rollback;
  return [
    checkPhase(),
    guardPhase(current, 'the currently installed version'),
    routesOffPhase(current, 'current'),
    controllerPhase(rollback, 'helm upgrade to the rollback version'),
    activatePhase(rollback),
    unguardPhase(rollback),
  ];
}

/** `nls rollback ...`; returns the exit code. */
export async function runRollback(args: string[], out: (line: string) => void = commandOutput): Promise<number> {
  let parsed: LifecycleArgs;
  try {
    parsed = parseLifecycleArgs('rollback', args, rollbackUsage, ['to', 'chart']);
    if (parsed.values.version) throw new UsageError('rollback: use --to for the version to roll back to (--version belongs to upgrade)');
  } catch (error) {
    out(`error: ${(error as Error).message}`);
    return error instanceof UsageError ? ExitCode.usage : ExitCode.error;
  }
  const to = parsed.values.to;
  const context: RollbackContext = {
    ...lifecycleContext(parsed),
    source: {},
    to,
    userValueFiles: parsed.valueFiles,
    resuming: parsed.resumeFrom !== undefined,
    current: { chart: parsed.chart, version: '(the installed version)', valueFiles: [], valuesLabel: "the release's current user-supplied values" },
    rollback: {
      chart: parsed.chart,
      version: to,
      valueFiles: [...parsed.valueFiles],
      valuesLabel: parsed.valueFiles.length > 0 ? `values ${parsed.valueFiles.join(', ')}` : `the values the release last ran ${to} with`,
    },
  };
  return runLifecycle('rollback', rollbackPhases(), context, { parsed, args, version: to, out });
}
