// `nls preflight --version V`, also the first phase of `nls upgrade`: what seed 001 asks users to
// review by hand before an upgrade. (1) Every stored LLMModel, PassthroughModel and
// AgentDeployment admitted by this release's offline admission (./preflight-objects): each object
// the new version would refuse, with the field and the fix. (2) The installed gateway stack against
// the compatibility matrix (./gateway-stack). Any refused object or gateway error blocks: exit 3,
// nothing changed; `nls upgrade --ignore-preflight` goes on anyway. Reads only.
//
// The version: this nls can only run its own release's admission, so `nls preflight --version V`
// for another V is refused, naming the nls to run instead. `nls upgrade --version V` with another V
// (a test build, or an nls older than the target) still runs this release's checks and says so.
import { version as cliVersion } from '../../version';
import { type KubeRest, KubeRest as Rest } from '../../kube/rest';
import { kubeConfigFrom } from './crds';
import { parseFlags } from '../flags';
import { type GatewayFinding, gatewayStackFindings, readGatewayStack } from '../gateway/gateway-stack';
import { CHART_NAME } from './guarded-phases';
import { findInstallation } from './installation';
import { ExitCode, type Phase, RefusedError, UsageError } from '../phases';
import { admitStoredObjects, listStoredObjects, type ObjectFinding } from './preflight-objects';
import { commandOutput } from '../output';

export const preflightUsage = `Usage:
  nls preflight [--version V] [--release NAME] [--namespace NS] [--kubeconfig PATH] [--context NAME] [--output text|json]
Before an upgrade to V (this nls's version, ${cliVersion}; the default), checks:
  objects   every stored LLMModel, PassthroughModel and AgentDeployment, admitted as a CREATE by
            this release's admission (CRD schema and CEL rules, webhook checks, as nls validate):
            each one it would refuse, with the field and the fix
  gateway   the Gateway API, Envoy Gateway and AI Gateway CRDs and controller images against the
            compatibility matrix (docs/compatibility.md): missing, too old, newer than tested, unknown
Changes nothing. nls upgrade runs the same checks as its first phase.
  --version V           the version to check for; only this nls's own version (run V's nls for V)
  --release NAME        release name (default ${CHART_NAME}); its operator Deployment gives the
                        namespaces whose AgentDeployments are admitted (watchNamespaces)
  --namespace NS        release namespace (default ${CHART_NAME}-system)
  --output text|json    readable lines (default) or a JSON report
Exit codes: 0 nothing blocks (warnings may be printed), 2 bad arguments (or V is not ${cliVersion}),
3 an object would be refused or the gateway stack cannot serve this release.`;

export interface PreflightReport {
  /** The release whose admission was run (this nls). */
  readonly checkedVersion: string;
  readonly targetVersion: string;
  readonly release: string;
  readonly namespace: string;
  readonly objects: { readonly checked: number; readonly notServed: readonly string[]; readonly findings: readonly ObjectFinding[] };
  readonly gateway: readonly GatewayFinding[];
  /** True when a refused object or a gateway error would stop `nls upgrade`. */
  readonly blocked: boolean;
}

/** Runs both checks against the cluster. */
export async function preflightReport(rest: KubeRest, release: string, namespace: string, targetVersion: string): Promise<PreflightReport> {
  const installation = await findInstallation(rest, release, namespace);
  const { objects: stored, notServed } = await listStoredObjects(rest);
  const { checked, findings } = await admitStoredObjects(stored, namespace, installation?.watchNamespaces ?? []);
  const gateway = gatewayStackFindings(await readGatewayStack(rest));
  const blocked = findings.some((f) => f.severity === 'error') || gateway.some((g) => g.severity === 'error');
  return { checkedVersion: cliVersion, targetVersion, release, namespace, objects: { checked, notServed, findings }, gateway, blocked };
}

/** The readable report: one entry per finding with its fix, then the verdict. */
export function formatPreflight(report: PreflightReport): string[] {
  const lines: string[] = [];
  const { objects } = report;
  const refused = objects.findings.filter((f) => f.severity === 'error');
  lines.push(`stored objects: ${objects.checked} checked with the admission of ${report.checkedVersion}, ${new Set(refused.map((f) => `${f.kind}/${f.namespace}/${f.name}`)).size} would be refused`);
  for (const kind of objects.notServed) lines.push(`  note: ${kind} is not served by the API server (its CRD is not installed); nothing to check`);
  for (const f of objects.findings) {
    lines.push(`  ${f.severity === 'error' ? 'ERROR' : 'warning'} ${f.kind} ${f.namespace}/${f.name}: ${f.field && !f.message.startsWith(f.field) ? `${f.field}: ` : ''}${f.message}`);
    lines.push(`        fix: ${f.fix}`);
  }
  const errors = report.gateway.filter((g) => g.severity === 'error').length;
  lines.push(`gateway stack: ${report.gateway.length === 0 ? 'matches the compatibility matrix' : `${errors} error(s), ${report.gateway.length - errors} warning(s)`}`);
  for (const g of report.gateway) {
    lines.push(`  ${g.severity === 'error' ? 'ERROR' : 'warning'} ${g.component}: ${g.message}`);
    lines.push(`        fix: ${g.fix}`);
  }
  const problems = refused.length + errors;
  lines.push(report.blocked ? `preflight: ${problems} problem(s) block the upgrade to ${report.targetVersion}; fix them and run nls preflight again` : `preflight: nothing blocks the upgrade to ${report.targetVersion}`);
  return lines;
}

const sameVersion = (a: string, b: string) => a.replace(/^v/, '') === b.replace(/^v/, '');

/** What `--version V` means for a CLI of another version. */
export function versionMismatch(target: string): string | undefined {
  if (sameVersion(target, cliVersion)) return undefined;
  return `this nls is ${cliVersion} and runs only the admission of ${cliVersion}; to check for ${target}, run the nls of ${target} (nls preflight --version ${target}), which carries that release's rules`;
}

/** The context the upgrade's preflight phase needs. */
export interface PreflightContext {
  readonly rest: KubeRest;
  readonly release: { readonly name: string; readonly namespace: string };
  readonly target: { readonly version: string };
  /** --ignore-preflight: report, but go on. */
  readonly ignorePreflight: boolean;
}

/** `nls upgrade`'s first phase. */
export function preflightPhase<C extends PreflightContext>(): Phase<C> {
  return {
    name: 'preflight',
    title: 'check the stored objects against the admission of this release and the gateway stack against the compatibility matrix',
    waitsFor: 'every stored LLMModel, PassthroughModel and AgentDeployment to be admitted and the gateway versions to be read',
    readOnly: true,
    actions: (c) => [
      `admit every stored LLMModel, PassthroughModel and AgentDeployment as a CREATE with the admission of nls ${cliVersion}${sameVersion(c.target.version, cliVersion) ? '' : ` (the target is ${c.target.version}: run its nls preflight for its own rules)`}`,
      'read the Gateway API, Envoy Gateway and AI Gateway CRDs and controller images; compare with docs/compatibility.md',
      c.ignorePreflight ? '--ignore-preflight: report problems, go on' : 'refuse (exit 3, nothing changed) on any refused object or gateway error; --ignore-preflight goes on',
    ],
    run: async (c, r) => {
      const mismatch = versionMismatch(c.target.version);
      if (mismatch) r.note(`note: ${mismatch}`);
      const report = await preflightReport(c.rest, c.release.name, c.release.namespace, c.target.version);
      for (const line of formatPreflight(report)) r.note(line);
      if (!report.blocked) return;
      if (c.ignorePreflight) {
        r.note('going on because of --ignore-preflight: the problems above stay; the new version may refuse or fail to reconcile those objects');
        return;
      }
      throw new RefusedError('preflight found problems that block the upgrade (listed above); fix them, or pass --ignore-preflight to upgrade anyway');
    },
  };
}

/** `nls preflight ...`; returns the exit code. */
export async function runPreflight(args: string[], out: (line: string) => void = commandOutput): Promise<number> {
  let rest: KubeRest;
  let release: string;
  let namespace: string;
  let output: string;
  let target: string;
  try {
    const flags = parseFlags('preflight', args, {
      version: { type: 'string' },
      release: { type: 'string' },
      namespace: { type: 'string' },
      kubeconfig: { type: 'string' },
      context: { type: 'string' },
      output: { type: 'string' },
    });
    if (flags.positionals.length > 0) throw new UsageError(`preflight: unexpected argument "${flags.positionals[0]}"\n${preflightUsage}`);
    output = flags.values.output ?? 'text';
    if (output !== 'text' && output !== 'json') throw new UsageError(`preflight: --output "${output}" is not supported; use text or json`);
    target = flags.values.version ?? cliVersion;
    const mismatch = versionMismatch(target);
    if (mismatch) throw new UsageError(`preflight: --version ${target}: ${mismatch}`);
    release = flags.values.release ?? CHART_NAME;
    namespace = flags.values.namespace ?? `${CHART_NAME}-system`;
    rest = new Rest(kubeConfigFrom(flags.values.kubeconfig, flags.values.context));
  } catch (error) {
    out(`error: ${(error as Error).message}`);
    return error instanceof UsageError ? ExitCode.usage : ExitCode.error;
  }
  try {
    const report = await preflightReport(rest, release, namespace, target);
    if (output === 'json') out(JSON.stringify(report, null, 2));
    else for (const line of formatPreflight(report)) out(line);
    return report.blocked ? ExitCode.refused : ExitCode.ok;
  } catch (error) {
    out(`error: ${(error as Error).message}`);
    return ExitCode.error;
  } finally {
    rest.close();
  }
}
