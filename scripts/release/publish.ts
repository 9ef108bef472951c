// Publishing one release to an OCI registry: the operator image index, then the chart packaged
// with that image pinned by digest, and the checks that both are really there (what a user's
// `helm show chart oci://… --version V` and the kubelet will fetch).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseDocument } from 'yaml';
import { type ReleaseTools, run, tryRun } from './tools';
import { RELEASED_IMAGE_ANNOTATION } from '../../src/release-pin';

export const CHART_NAME = 'nebari-llm-serving';
export const IMAGE_NAME = 'nebari-llm-serving';

/** Where a release goes, all derived from `--registry oci://HOST[:PORT]/PATH`. */
export interface ReleaseRefs {
  /** `HOST[:PORT]/PATH` */
  readonly base: string;
  /** `HOST/PATH/nebari-llm-serving` (image repository, as in the chart values). */
  readonly imageRepository: string;
  /** `oci://HOST/PATH/charts` (what `helm push` takes). */
  readonly chartRepository: string;
  /** `oci://HOST/PATH/charts/nebari-llm-serving` (what `helm install` takes). */
  readonly chartRef: string;
  /** `HOST/PATH/charts/nebari-llm-serving` (the chart as an OCI artifact, for crane and cosign). */
  readonly chartArtifact: string;
  readonly plainHttp: boolean;
}

export function releaseRefs(registry: string, plainHttp: boolean): ReleaseRefs {
  const base = registry.replace(/^oci:\/\//, '').replace(/\/+$/, '');
  if (!/^[a-z0-9.-]+(:\d+)?(\/[a-z0-9._-]+)+$/.test(base)) {
    throw new Error(`--registry "${registry}" is not an OCI repository prefix: use oci://HOST[:PORT]/PATH (lower case, no tag), e.g. oci://registry.example.com/nebari`);
  }
  return {
    base,
    imageRepository: `${base}/${IMAGE_NAME}`,
    chartRepository: `oci://${base}/charts`,
    chartRef: `oci://${base}/charts/${CHART_NAME}`,
    chartArtifact: `${base}/charts/${CHART_NAME}`,
    plainHttp,
  };
}

function craneArgs(refs: ReleaseRefs): string[] {
  return refs.plainHttp ? ['--insecure'] : [];
}

function helmRegistryArgs(refs: ReleaseRefs): string[] {
  return refs.plainHttp ? ['--plain-http'] : [];
}

/** The digest the registry resolves `reference` (a tag) to now. */
export function tagDigest(tools: ReleaseTools, refs: ReleaseRefs, reference: string): string {
  return run(tools.crane, ['digest', reference, ...craneArgs(refs)]).trim();
}

/** What of this version is already in the registry (releases are immutable: any of it refuses). */
export function publishedParts(tools: ReleaseTools, refs: ReleaseRefs, version: string): string[] {
  const found: string[] = [];
  if (tryRun(tools.crane, ['digest', `${refs.imageRepository}:${version}`, ...craneArgs(refs)]).code === 0) found.push(`image ${refs.imageRepository}:${version}`);
  if (tryRun(tools.helm3, ['show', 'chart', refs.chartRef, '--version', version, ...helmRegistryArgs(refs)]).code === 0) found.push(`chart ${refs.chartRef} ${version}`);
  return found;
}

/** The digest of the single index in an OCI layout written by scripts/build-image.sh. */
export function layoutIndexDigest(layout: string): string {
  const index = JSON.parse(fs.readFileSync(path.join(layout, 'index.json'), 'utf8')) as { manifests?: { digest: string }[] };
  if (index.manifests?.length !== 1) throw new Error(`${layout}/index.json should hold exactly one image index, found ${index.manifests?.length ?? 0}`);
  return index.manifests[0].digest;
}

/** The version and revision labels of every platform image in an OCI layout. */
export function layoutLabels(layout: string): { version: string; revision: string }[] {
  const blob = (digest: string) => JSON.parse(fs.readFileSync(path.join(layout, 'blobs', ...digest.split(':')), 'utf8'));
  const index = blob(layoutIndexDigest(layout)) as Manifest;
  return (index.manifests ?? []).map((m) => {
    const config = blob((blob(m.digest) as { config: { digest: string } }).config.digest) as { config?: { Labels?: Record<string, string> } };
    const labels = config.config?.Labels ?? {};
    return { version: labels['org.opencontainers.image.version'] ?? '', revision: labels['org.opencontainers.image.revision'] ?? '' };
  });
}

/** Pushes the image index; returns its digest, which must be the layout's (nothing rebuilt on the way). */
export function pushImage(tools: ReleaseTools, refs: ReleaseRefs, layout: string, version: string): string {
  const expected = layoutIndexDigest(layout);
  // Not `--index`: that would wrap the layout's index.json around the image index, a new digest.
  run(tools.crane, ['push', layout, `${refs.imageRepository}:${version}`, ...craneArgs(refs)]);
  const digest = tagDigest(tools, refs, `${refs.imageRepository}:${version}`);
  if (digest !== expected) throw new Error(`the registry reports ${digest} for the image, but the built index is ${expected}`);
  return digest;
}

/**
 * Packages the committed chart with the released image pinned by digest (values
 * operator.image.repository and .digest; comments kept) into `outDir`; returns the .tgz path.
 */
export function packageChart(tools: ReleaseTools, chartDir: string, refs: ReleaseRefs, imageDigest: string, outDir: string): string {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-release-chart-'));
  try {
    const copy = path.join(work, CHART_NAME);
    fs.cpSync(chartDir, copy, { recursive: true });
    const valuesFile = path.join(copy, 'values.yaml');
    const values = parseDocument(fs.readFileSync(valuesFile, 'utf8'));
    values.setIn(['operator', 'image', 'repository'], refs.imageRepository);
    values.setIn(['operator', 'image', 'digest'], imageDigest);
    fs.writeFileSync(valuesFile, values.toString());
    // Also where values cannot move it: the operator Deployment carries it for nls verify --images.
    const chartFile = path.join(copy, 'Chart.yaml');
    const chart = parseDocument(fs.readFileSync(chartFile, 'utf8'));
    chart.setIn(['annotations', RELEASED_IMAGE_ANNOTATION], `${refs.imageRepository}@${imageDigest}`);
    fs.writeFileSync(chartFile, chart.toString());
    fs.mkdirSync(outDir, { recursive: true });
    const out = run(tools.helm3, ['package', copy, '--destination', outDir]);
    const tgz = /saved it to: (.+\.tgz)/.exec(out)?.[1]?.trim();
    if (!tgz || !fs.existsSync(tgz)) throw new Error(`helm package did not report the package it wrote: ${out}`);
    return tgz;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** Pushes the packaged chart; returns the chart manifest's digest. */
export function pushChart(tools: ReleaseTools, refs: ReleaseRefs, tgz: string, version: string): string {
  run(tools.helm3, ['push', tgz, refs.chartRepository, ...helmRegistryArgs(refs)]);
  return tagDigest(tools, refs, `${refs.chartArtifact}:${version}`);
}

interface Manifest {
  readonly mediaType?: string;
  readonly manifests?: { digest: string; platform?: { os: string; architecture: string } }[];
  readonly layers?: { size: number }[];
  readonly config?: { size: number };
}

export interface PublicationCheck {
  /** Compressed size of each platform's image (config + layers), bytes. */
  readonly platformBytes: Record<string, number>;
  readonly helm: string[];
}

/**
 * Checks publication as users meet it: `helm show chart` with helm v3 and v4 finds this version
 * with this appVersion and the image pinned; the tag resolves to the released digests; the image
 * index and both platform manifests can be fetched by digest. Throws naming what is missing.
 */
export function verifyPublication(tools: ReleaseTools, refs: ReleaseRefs, version: string, digests: { image: string; chart: string }): PublicationCheck {
  const helm: string[] = [];
  for (const [name, binary] of [['helm v3', tools.helm3], ['helm v4', tools.helm4]] as const) {
    const shown = tryRun(binary, ['show', 'chart', refs.chartRef, '--version', version, ...helmRegistryArgs(refs)]);
    if (shown.code !== 0) throw new Error(`${name}: helm show chart ${refs.chartRef} --version ${version} failed, so users cannot install it: ${shown.output}`);
    const meta = parseDocument(shown.output).toJS() as { name?: string; version?: string; appVersion?: string; annotations?: Record<string, string> };
    if (meta.annotations?.[RELEASED_IMAGE_ANNOTATION] !== `${refs.imageRepository}@${digests.image}`) {
      throw new Error(`${name}: the published Chart.yaml's annotation ${RELEASED_IMAGE_ANNOTATION} is ${meta.annotations?.[RELEASED_IMAGE_ANNOTATION] ?? 'missing'}, expected ${refs.imageRepository}@${digests.image}`);
    }
    if (meta.name !== CHART_NAME || meta.version !== version || meta.appVersion !== version) {
      throw new Error(`${name}: helm show chart found ${meta.name} ${meta.version} (appVersion ${meta.appVersion}), expected ${CHART_NAME} ${version}`);
    }
    const values = parseDocument(run(binary, ['show', 'values', refs.chartRef, '--version', version, ...helmRegistryArgs(refs)])).toJS() as { operator?: { image?: { repository?: string; digest?: string } } };
    if (values.operator?.image?.digest !== digests.image || values.operator.image.repository !== refs.imageRepository) {
      throw new Error(`${name}: the published chart's operator.image is ${values.operator?.image?.repository}@${values.operator?.image?.digest}, expected ${refs.imageRepository}@${digests.image}`);
    }
    helm.push(`${name}: ${meta.name} ${meta.version} (appVersion ${meta.appVersion})`);
  }
  const chartDigest = tagDigest(tools, refs, `${refs.chartArtifact}:${version}`);
  if (chartDigest !== digests.chart) throw new Error(`the chart tag ${version} now points at ${chartDigest}, not the released ${digests.chart}`);
  const imageDigest = tagDigest(tools, refs, `${refs.imageRepository}:${version}`);
  if (imageDigest !== digests.image) throw new Error(`the image tag ${version} now points at ${imageDigest}, not the released ${digests.image}`);

  const index = JSON.parse(run(tools.crane, ['manifest', `${refs.imageRepository}@${digests.image}`, ...craneArgs(refs)])) as Manifest;
  const platformBytes: Record<string, number> = {};
  for (const arch of ['amd64', 'arm64']) {
    const entry = index.manifests?.find((m) => m.platform?.os === 'linux' && m.platform.architecture === arch);
    if (!entry) throw new Error(`the image index ${digests.image} has no linux/${arch} manifest`);
    const manifest = JSON.parse(run(tools.crane, ['manifest', `${refs.imageRepository}@${entry.digest}`, ...craneArgs(refs)])) as Manifest;
    platformBytes[`linux/${arch}`] = (manifest.config?.size ?? 0) + (manifest.layers ?? []).reduce((sum, l) => sum + l.size, 0);
  }
  return { platformBytes, helm };
}
