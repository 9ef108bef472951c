// `nls upgrade`: the routine upgrade (seed 001: check publication, CRDs server-side first) joined
// with the three-phase guarded controller upgrade (seed 000, phases in ./guarded-phases):
// guard -> controller with the AgentDeployment routes off, restarted until only new pods serve ->
// routes on, CA trusted -> unguard. The check phase also enforces the support policy's N→N+1 rule
// (upgradeStepProblem); the preflight phase before it (./preflight) refuses an upgrade over stored
// objects the new rules refuse, or onto a gateway stack that cannot serve it.
import { compareVersions, formatVersion, releaseLine, skippedLine, tryParseVersion } from '../../semver';
import { crdPhases } from './crds';
import { chartVersionOf } from './helm';
import { findInstallation } from './installation';
import {
  CHART_NAME, type GuardedContext, type LifecycleArgs, type ReleaseTarget, activatePhase, controllerPhase, guardPhase, runLifecycle,
  lifecycleContext, parseLifecycleArgs, renderGuard, requirePublished, requireRelease, unguardPhase, withoutPhaseKeys, writeValuesFile,
} from './guarded-phases';
import { ExitCode, type Phase, RefusedError, UsageError } from '../phases';
import { preflightPhase } from './preflight';
import { commandOutput } from '../output';

export const upgradeUsage = `Usage:
  nls upgrade --chart oci://REGISTRY/PATH/nebari-llm-serving --version V [options]
Checks that the chart version is published and one minor release line at most after the
installed one (N→N+1, RELEASES.md), applies its CRDs server-side, then upgrades the release
behind the AgentDeployment guard (seed procedure):
  preflight          every stored LLMModel, PassthroughModel and AgentDeployment admitted by
                     this release's rules, the gateway stack against the compatibility matrix
                     (as nls preflight); a refused object or a gateway error stops here
  check              the release, the N→N+1 step, the published target chart
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
  --allow-skip          warn instead of refusing when V skips a minor release line (only
                        when the release notes of V allow that skip); older versions are
                        always refused: use nls rollback --to
  --ignore-preflight    report what preflight finds, but go on
  --dry-run             print the plan; change nothing
Exit codes: 0 done, 2 bad arguments, 3 refused before any change, 4 a phase failed (resume).
Helm: NLS_HELM, else helm on PATH.`;


/** What the N→N+1 check says about one upgrade step: a reason to refuse, or a line to print. */
export interface UpgradeStep {
  readonly refuse?: string;
  readonly note?: string;
}

const RELEASE_FORMS = 'X.Y.Z or X.Y.Z-rc.N';

/**
 * The support policy's N→N+1 rule (RELEASES.md) for upgrading the installed chart version
 * `current` to `target`: the same or the next minor release line (patches and release
 * candidates may be skipped). A target that skips a line is refused, or with `allowSkip` only
 * warned about; an older target is always refused (that is a rollback). Versions that are not
 * release versions (test and dev builds such as `0.2.1-e2e`) are not checked, only noted.
 */
export function upgradeStepProblem(current: string, target: string, allowSkip = false): UpgradeStep {
  const from = tryParseVersion(current);
  const to = tryParseVersion(target);
  if (!from || !to) {
    const which = [
      ...(from ? [] : [current ? `the installed chart version ${current}` : 'the installed chart version (unreadable)']),
      ...(to ? [] : [`the target version ${target}`]),
    ];
    return { note: `N→N+1 check skipped: ${which.join(' and ')} ${which.length > 1 ? 'are not release versions' : 'is not a release version'} (${RELEASE_FORMS})` };
  }
  const [cur, tgt] = [formatVersion(from), formatVersion(to)];
  const order = compareVersions(to, from);
  if (order < 0) {
    return {
      refuse: `the target ${tgt} is older than the installed ${cur}: nls upgrade does not downgrade; ` +
        `roll back with nls rollback --to ${tgt} (docs/upgrading.md, "Rolling back")`,
    };
  }
  if (order === 0) return { note: `N→N+1 check: the release already runs ${tgt} (a re-run, or a resumed upgrade)` };
  const skipped = skippedLine(from, to);
  if (skipped !== undefined) {
    if (allowSkip) {
      return {
        note: `warning: upgrading ${cur} → ${tgt} skips ${skipped}, which the support policy does not cover (RELEASES.md); ` +
          `going on because of --allow-skip: the release notes of ${tgt} must allow this skip`,
      };
    }
    return {
      refuse: `upgrading ${cur} → ${tgt} skips ${skipped}: upgrades are supported one minor release at a time (RELEASES.md); ` +
        `upgrade to the newest ${skipped}.x first, then to ${tgt}, or pass --allow-skip if the release notes of ${tgt} allow this skip`,
    };
  }
  if (to.major > from.major) {
    // skippedLine allows X.Y -> (X+1).0 from any Y: whether Y is the last minor of X is not knowable here.
    return {
      note: `N→N+1 check: ${cur} → ${tgt} is a major step, supported only from the newest ${from.major}.x release line (RELEASES.md); ` +
        `nls cannot tell whether ${releaseLine(from)} is that line: check the release notes of ${tgt}`,
    };
  }
  const line = releaseLine(to);
  return { note: `N→N+1 check: ${cur} → ${tgt} ${releaseLine(from) === line ? `stays in the release line ${line}` : `moves to the next minor release line, ${line}`}` };
}

interface UpgradeContext extends GuardedContext {
  readonly target: ReleaseTarget;
  readonly userValueFiles: readonly string[];
  /** --allow-skip: a target that skips a minor release line is only warned about. */
  readonly allowSkip: boolean;
  /** --ignore-preflight: preflight problems are reported, not refused. */
  readonly ignorePreflight: boolean;
  currentVersion?: string;
}

function checkPhase(): Phase<UpgradeContext> {
  return {
    name: 'check',
    title: 'check the release, the N→N+1 upgrade step and that the target chart is published',
    waitsFor: 'helm show chart to find the target version',
    readOnly: true,
    actions: (c) => [
      `helm history ${c.release.name} -n ${c.release.namespace} (the release exists, no operation pending)`,
      c.allowSkip
        ? `N→N+1 rule (RELEASES.md): refuse ${c.target.version} if it is older than the installed version; --allow-skip: only warn if it skips a minor release line`
        : `N→N+1 rule (RELEASES.md): refuse ${c.target.version} if it is older than the installed version or skips a minor release line (--allow-skip: warn instead)`,
      `helm show chart ${c.target.chart.ref} --version ${c.target.version} (refuse an unpublished version)`,
      c.userValueFiles.length > 0 ? `values: ${c.userValueFiles.join(', ')}` : `values: helm get values ${c.release.name} (the release's user-supplied values)`,
    ],
    run: async (c, r) => {
      const helm = c.helm();
      const history = await requireRelease(helm, c.release);
      const last = history[history.length - 1];
      c.currentVersion = chartVersionOf(last.chart);
      r.note(`release ${c.release.name}: revision ${last.revision} (${last.status}) runs chart ${last.chart}`);
      const step = upgradeStepProblem(c.currentVersion, c.target.version, c.allowSkip);
      if (step.refuse) throw new RefusedError(step.refuse);
      if (step.note) r.note(step.note);
      await requirePublished(helm, c.target.chart, c.target.version);
      r.note(`chart ${CHART_NAME} ${c.target.version} is published at ${c.target.chart.ref}`);
      if (c.userValueFiles.length === 0) {
        c.target.valueFiles = [writeValuesFile(withoutPhaseKeys(await helm.userValues(c.release)), 'release-values')];
      }
      c.guard = await renderGuard(helm, c.rest, c.release, c.target);
      if (!(await findInstallation(c.rest, c.release.name, c.release.namespace))) {
        throw new RefusedError(`release ${c.release.name} has no operator Deployment in ${c.release.namespace}; repair the release (helm upgrade) before the guarded upgrade`);
      }
    },
  };
}

export function upgradePhases(): Phase<UpgradeContext>[] {
  const target = (c: UpgradeContext) => c.target;
  return [
    preflightPhase<UpgradeContext>(),
    checkPhase(),
    ...crdPhases<UpgradeContext>(),
    guardPhase(target, 'the target chart'),
    controllerPhase(target, 'helm upgrade to the target version'),
    activatePhase(target),
    unguardPhase(target),
  ];
}


/** `nls upgrade ...`; returns the exit code. */
export async function runUpgrade(args: string[], out: (line: string) => void = commandOutput): Promise<number> {
  let parsed: LifecycleArgs;
  try {
    parsed = parseLifecycleArgs('upgrade', args, upgradeUsage, ['chart', 'version'], ['allow-skip', 'ignore-preflight']);
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
    // A CRD that gains versions converts through this release's webhook before it changes.
    conversionRelease: parsed.release,
    target,
    userValueFiles: parsed.valueFiles,
    allowSkip: parsed.switches.has('allow-skip'),
    ignorePreflight: parsed.switches.has('ignore-preflight'),
  };
  return runLifecycle('upgrade', upgradePhases(), context, { parsed, args, version: version, out });
}
