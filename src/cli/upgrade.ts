// `nls upgrade`: the routine upgrade (seed 001: check publication, CRDs server-side first) joined
// with the three-phase guarded controller upgrade (seed 000, phases in ./guarded-phases):
// guard -> controller with the AgentDeployment routes off, restarted until only new pods serve ->
// routes on, CA trusted -> unguard.
import { crdPhases } from './crds';
import { chartVersionOf } from './helm';
import { findInstallation } from './installation';
import {
  CHART_NAME, type GuardedContext, type LifecycleArgs, type ReleaseTarget, activatePhase, controllerPhase, guardPhase, guardedFailureNote,
  lifecycleContext, parseLifecycleArgs, renderGuard, requirePublished, requireRelease, unguardPhase, withoutPhaseKeys, writeValuesFile,
} from './guarded-phases';
import { ExitCode, type Phase, RefusedError, UsageError, runPhases } from './phases';

export const upgradeUsage = `Usage:
  nls upgrade --chart oci://REGISTRY/PATH/nebari-llm-serving --version V [options]
Checks that the chart version is published, applies its CRDs server-side, then upgrades the
release behind the AgentDeployment guard (seed procedure):
  crds-check, crds   CRDs from the target chart, server-side, each waited Established
  guard              install the fail-closed guard; wait until the API server enforces it
  controller         helm upgrade with the AgentDeployment routes off; restart; wait until
                     only new pods are behind the webhook Service
  activate           helm upgrade with the routes on; wait for the serving CA and for every
                     AgentDeployment webhook's caBundle to equal it
  unguard            helm upgrade without the guard; wait until writes reach the validator
On failure the guard stays and the output names the phase for --resume-from.
Options:
  --release NAME        release name (default nebari-llm-serving)
  --namespace NS        release namespace (default nebari-llm-serving-system)
  -f, --values FILE     values for the new release (repeatable); default: the release's
                        current user-supplied values
  --plain-http          talk to the OCI registry over HTTP
  --kubeconfig PATH     kubeconfig file;  --context NAME  kubeconfig context
  --timeout DURATION    limit of each wait (default 5m)
  --resume-from PHASE   skip the phases before PHASE (after fixing what failed)
  --dry-run             print the plan; change nothing
Exit codes: 0 done, 2 bad arguments, 3 refused before any change, 4 a phase failed (resume).
Helm: NLS_HELM, else helm on PATH.`;


interface UpgradeContext extends GuardedContext {
  readonly target: ReleaseTarget;
  readonly userValueFiles: readonly string[];
  currentVersion?: string;
}

function checkPhase(): Phase<UpgradeContext> {
  return {
    name: 'check',
    title: 'check the release and that the target chart is published',
    waitsFor: 'helm show chart to find the target version',
    readOnly: true,
    actions: (c) => [
      `helm history ${c.release.name} -n ${c.release.namespace} (the release exists, no operation pending)`,
      `helm show chart ${c.target.chart.ref} --version ${c.target.version} (refuse an unpublished version)`,
      c.userValueFiles.length > 0 ? `values: ${c.userValueFiles.join(', ')}` : `values: helm get values ${c.release.name} (the release's user-supplied values)`,
    ],
    run: async (c, r) => {
      const helm = c.helm();
      const history = await requireRelease(helm, c.release);
      const last = history[history.length - 1];
      c.currentVersion = chartVersionOf(last.chart);
      r.note(`release ${c.release.name}: revision ${last.revision} (${last.status}) runs chart ${last.chart}`);
      await requirePublished(helm, c.target.chart, c.target.version);
      r.note(`chart ${CHART_NAME} ${c.target.version} is published at ${c.target.chart.ref}`);
      if (c.userValueFiles.length === 0) {
        c.target.valueFiles = [writeValuesFile(withoutPhaseKeys(await helm.userValues(c.release)), 'release-values')];
      }
      c.guard = await renderGuard(helm, c.release, c.target);
      if (!(await findInstallation(c.rest, c.release.name, c.release.namespace))) {
        throw new RefusedError(`release ${c.release.name} has no operator Deployment in ${c.release.namespace}; repair the release (helm upgrade) before the guarded upgrade`);
      }
    },
  };
}

export function upgradePhases(): Phase<UpgradeContext>[] {
  const target = (c: UpgradeContext) => c.target;
  return [
    checkPhase(),
    ...crdPhases<UpgradeContext>(),
    guardPhase(target, 'the target chart'),
    controllerPhase(target, 'helm upgrade to the target version'),
    activatePhase(target),
    unguardPhase(target),
  ];
}

const stdout = (line: string) => process.stdout.write(line + '\n');

/** `nls upgrade ...`; returns the exit code. */
export async function runUpgrade(args: string[], out: (line: string) => void = stdout): Promise<number> {
  let parsed: LifecycleArgs;
  try {
    parsed = parseLifecycleArgs('upgrade', args, upgradeUsage, ['chart', 'version']);
    if (parsed.values.to) throw new UsageError('upgrade: --to belongs to rollback; use --version');
  } catch (error) {
    out(`error: ${(error as Error).message}`);
    return error instanceof UsageError ? ExitCode.usage : ExitCode.error;
  }
  const version = parsed.values.version;
  const target: ReleaseTarget = {
    chart: parsed.chart,
    version,
    valueFiles: [...parsed.valueFiles],
    valuesLabel: parsed.valueFiles.length > 0 ? `values ${parsed.valueFiles.join(', ')}` : "the release's user-supplied values",
  };
  const context: UpgradeContext = {
    ...lifecycleContext(parsed),
    source: { chart: parsed.chart, version },
    target,
    userValueFiles: parsed.valueFiles,
  };
  try {
    out(`nls upgrade: release ${parsed.release.name} in ${parsed.release.namespace} to ${CHART_NAME} ${version}`);
    return await runPhases(upgradePhases(), context, {
      command: ['nls', 'upgrade', ...args],
      resumeFrom: parsed.resumeFrom,
      dryRun: parsed.dryRun,
      onFailure: guardedFailureNote,
      out,
    });
  } finally {
    context.rest?.close();
  }
}
