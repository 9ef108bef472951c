// Running the real helm binary for the lifecycle commands: finding it (`NLS_HELM`, else `helm`
// on PATH), and the handful of helm calls the upgrade and rollback need, each returning parsed
// output or an error that quotes helm's own message.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';

export interface HelmResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Where helm is: `NLS_HELM` when set, else the first `helm` on PATH. */
export function findHelm(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env.NLS_HELM?.trim();
  if (explicit) {
    if (!fs.existsSync(explicit)) throw new Error(`NLS_HELM is "${explicit}", which does not exist; point it at a helm 3.17+ or helm 4 binary`);
    return explicit;
  }
  for (const dir of (env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, 'helm');
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // not here; keep looking
    }
  }
  throw new Error('helm was not found on PATH; install helm 3.17+ (or 4) or set NLS_HELM to its path');
}

/** A chart as the lifecycle commands address it: an OCI/repo reference or a local directory/.tgz. */
export interface ChartSource {
  /** `oci://registry/path/nebari-llm-serving`, a directory or a packaged .tgz. */
  readonly ref: string;
  /** Registry flags passed to every helm call that reads the chart (e.g. `--plain-http`). */
  readonly registryArgs?: readonly string[];
}

export function isLocalChart(ref: string): boolean {
  return !/^[a-z][a-z0-9+.-]*:\/\//i.test(ref) && fs.existsSync(ref);
}

/** `Chart.yaml` fields the commands look at. */
export interface ChartMetadata {
  readonly name: string;
  readonly version: string;
  readonly appVersion?: string;
}

/** One row of `helm history -o json`. */
export interface ReleaseRevision {
  readonly revision: number;
  readonly status: string;
  /** `<name>-<version>`. */
  readonly chart: string;
  readonly app_version?: string;
  readonly updated?: string;
  readonly description?: string;
}

export interface HelmOptions {
  readonly binary: string;
  /** Passed as `--kubeconfig` when set. */
  readonly kubeconfig?: string;
  /** Passed as `--kube-context` when set. */
  readonly kubeContext?: string;
  /** Extra environment for helm. */
  readonly env?: NodeJS.ProcessEnv;
}

/** A failed helm call: the command (without values) and helm's own message. */
export class HelmError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly result: HelmResult,
  ) {
    super(`helm ${args.slice(0, 3).join(' ')} failed (exit ${result.code}): ${(result.stderr || result.stdout).trim().split('\n').slice(-5).join('\n')}`);
    this.name = 'HelmError';
  }
}

export class Helm {
  private major: Promise<number> | undefined;

  constructor(readonly options: HelmOptions) {}

  /** Helm's major version (3 or 4), from `helm version`. */
  majorVersion(): Promise<number> {
    this.major ??= this.ok(['version', '--short'], { cluster: false }).then((out) => {
      const m = /^v?(\d+)\./.exec(out.trim());
      if (!m || Number(m[1]) < 3) throw new Error(`helm ${out.trim()} is too old; install helm 3.17+ or 4`);
      return Number(m[1]);
    });
    return this.major;
  }

  /** Runs helm with the cluster flags appended; never throws for a non-zero exit. */
  run(args: readonly string[], opts: { cluster?: boolean } = {}): Promise<HelmResult> {
    const cluster = opts.cluster === false ? [] : this.clusterArgs();
    return new Promise((resolve) => {
      execFile(this.options.binary, [...args, ...cluster], { env: { ...process.env, ...this.options.env }, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
        const raw = (err as { code?: unknown } | null)?.code;
        const code = err ? (typeof raw === 'number' ? raw : 127) : 0;
        resolve({ code, stdout: String(stdout), stderr: err && typeof raw !== 'number' ? `${stderr}${err.message}` : String(stderr) });
      });
    });
  }

  /** Like run, but a non-zero exit throws HelmError. */
  async ok(args: readonly string[], opts: { cluster?: boolean } = {}): Promise<string> {
    const result = await this.run(args, opts);
    if (result.code !== 0) throw new HelmError(args, result);
    return result.stdout;
  }

  private clusterArgs(): string[] {
    return [
      ...(this.options.kubeconfig ? ['--kubeconfig', this.options.kubeconfig] : []),
      ...(this.options.kubeContext ? ['--kube-context', this.options.kubeContext] : []),
    ];
  }

  /** `helm show chart`: the chart's metadata, or undefined with helm's reason when it cannot be read (not published). */
  async showChart(chart: ChartSource, version: string | undefined): Promise<{ chart?: ChartMetadata; problem?: string }> {
    const args = ['show', 'chart', chart.ref, ...versionArgs(chart, version), ...(chart.registryArgs ?? [])];
    const result = await this.run(args, { cluster: false });
    if (result.code !== 0) return { problem: (result.stderr || result.stdout).trim().split('\n').slice(-3).join(' ') };
    const meta = parseYaml(result.stdout) as ChartMetadata;
    return { chart: meta };
  }

  /** `helm show values` parsed. */
  async showValues(chart: ChartSource, version: string | undefined): Promise<Record<string, unknown>> {
    const out = await this.ok(['show', 'values', chart.ref, ...versionArgs(chart, version), ...(chart.registryArgs ?? [])], { cluster: false });
    return (parseYaml(out) as Record<string, unknown> | null) ?? {};
  }

  /** Pulls and unpacks a chart into a fresh temporary directory; returns the chart directory. */
  async pull(chart: ChartSource, version: string | undefined): Promise<string> {
    if (isLocalChart(chart.ref) && fs.statSync(chart.ref).isDirectory()) return chart.ref;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-chart-'));
    await this.ok(['pull', chart.ref, ...versionArgs(chart, version), ...(chart.registryArgs ?? []), '--untar', '--untardir', dir], { cluster: false });
    const [name] = fs.readdirSync(dir);
    if (!name) throw new Error(`helm pull ${chart.ref} unpacked nothing into ${dir}`);
    return path.join(dir, name);
  }

  /**
   * Renders templates offline (optionally only some files) for the cluster's Kubernetes version
   * (`kubeVersion`, its /version gitVersion): offline, helm 3.17 would assume 1.32, which the
   * chart's kubeVersion refuses. Returns the YAML stream.
   */
  template(
    release: ReleaseRef,
    chart: ChartSource,
    version: string | undefined,
    values: ValuesArgs,
    kubeVersion: string,
    showOnly: readonly string[] = [],
  ): Promise<string> {
    return this.ok(
      [
        'template', release.name, chart.ref, ...versionArgs(chart, version), '--namespace', release.namespace, '--kube-version', kubeVersion,
        ...(chart.registryArgs ?? []), ...valuesArgs(values), ...showOnly.flatMap((f) => ['--show-only', f]),
      ],
      { cluster: false },
    );
  }

  /**
   * `helm upgrade` of an existing release (never installs). Helm 4 applies server-side; fields
   * our own field manager also holds (the guard it adopted from us) must not stop it, so it forces
   * conflicts, which is what helm 3's client-side patch does anyway.
   */
  async upgrade(release: ReleaseRef, chart: ChartSource, version: string | undefined, values: ValuesArgs, timeout: string): Promise<void> {
    const force = (await this.majorVersion()) >= 4 ? ['--force-conflicts'] : [];
    await this.ok([
      'upgrade', release.name, chart.ref, ...versionArgs(chart, version), '--namespace', release.namespace,
      ...(chart.registryArgs ?? []), ...valuesArgs(values), '--timeout', timeout, ...force,
    ]);
  }

  /** The release's revisions, oldest first; empty when the release does not exist. */
  async history(release: ReleaseRef): Promise<ReleaseRevision[]> {
    const result = await this.run(['history', release.name, '--namespace', release.namespace, '--max', '256', '-o', 'json']);
    if (result.code !== 0) {
      if (/not found/i.test(result.stderr)) return [];
      throw new HelmError(['history', release.name], result);
    }
    return (JSON.parse(result.stdout || '[]') as ReleaseRevision[]).sort((a, b) => a.revision - b.revision);
  }

  /** User-supplied values of the release (of one revision when given). */
  async userValues(release: ReleaseRef, revision?: number): Promise<Record<string, unknown>> {
    const out = await this.ok(['get', 'values', release.name, '--namespace', release.namespace, '-o', 'json', ...(revision ? ['--revision', String(revision)] : [])]);
    return (JSON.parse(out || 'null') as Record<string, unknown> | null) ?? {};
  }
}

export interface ReleaseRef {
  readonly name: string;
  readonly namespace: string;
}

/** Values for one helm call: files first, then `--set` pairs (booleans and numbers stay typed). */
export interface ValuesArgs {
  readonly files?: readonly string[];
  readonly set?: Readonly<Record<string, string | boolean>>;
}

export function valuesArgs(values: ValuesArgs): string[] {
  return [
    ...(values.files ?? []).flatMap((f) => ['--values', f]),
    ...Object.entries(values.set ?? {}).flatMap(([key, value]) => ['--set', `${key}=${String(value)}`]),
  ];
}

function versionArgs(chart: ChartSource, version: string | undefined): string[] {
  return version && !isLocalChart(chart.ref) ? ['--version', version] : [];
}

/** `nebari-llm-serving-0.2.1` -> `0.2.1` (chart names may contain dashes; versions start with a digit). */
export function chartVersionOf(chartField: string): string {
  const m = /-(\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]*)?)$/.exec(chartField);
  return m ? m[1] : '';
}
