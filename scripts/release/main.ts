// `npm run release`: cuts one release (RELEASES.md) from a clean, tagged tree: checks, builds the
// image, pushes the image index and the chart (image pinned by digest), signs both with cosign,
// attaches the SBOM as a signed attestation, verifies everything as a user would, and writes the
// release notes, SBOM and checksums. `npm run release -- verify` repeats the checks a user runs.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { formatVersion, parseVersion } from '../../src/semver';
import { releaseNotes, upgradeSteps } from './changelog';
import { checksumsFile, sha256File } from './checksums';
import { attestSbom, signArtifact, type Signing, verifySbomAttestation, verifySignature, type Verification } from './cosign';
import { ReleaseRefused, preflight } from './preflight';
import { layoutIndexDigest, layoutLabels, packageChart, publishedParts, pushChart, pushImage, releaseRefs, tagDigest, verifyPublication } from './publish';
import { sbomFromRepo } from './sbom';
import { releaseTools, run } from './tools';

const root = path.resolve(__dirname, '..', '..');

const usage = `Usage:
  npm run release -- --version X.Y.Z[-rc.N] --registry oci://HOST/PATH (--key cosign.key | --keyless) [options]
  npm run release -- verify --version V --registry oci://HOST/PATH (--key cosign.pub | --identity RE --issuer URL) [--plain-http]

Release (from a clean tree whose HEAD is tagged vV; RELEASES.md):
  refuses a dirty tree, an untagged HEAD, a version not newer than the last release tag, a
  package/chart version that differs, an empty CHANGELOG.md section, or a version already in the
  registry; then builds the image (scripts/build-image.sh), pushes HOST/PATH/nebari-llm-serving:V
  and the chart oci://HOST/PATH/charts/nebari-llm-serving V (operator image pinned by digest),
  signs both by digest, attests the SBOM (CycloneDX) on the image, verifies, and writes
  dist/release/V/ (chart .tgz, release-notes.md, sbom.cdx.json, image-index.json, SHA256SUMS).
Options:
  --key FILE            sign with this cosign key pair (password in COSIGN_PASSWORD)
  --keyless             sign keyless (OIDC identity of the workflow; the real release pipeline)
  --plain-http          the registry speaks HTTP (a local test registry)
  --image-layout DIR    publish this OCI layout (from an earlier scripts/build-image.sh) instead
                        of building the image again
  --out DIR             where the release files go (default dist/release/V)
Verify: the chart through helm v3 and v4, the tags against the signed digests, both platform
manifests, the signatures of image and chart, and the SBOM attestation.
Exit codes: 0 done, 2 bad arguments, 3 refused before any change, 1 failed.`;

function fail(code: number, message: string): never {
  process.stderr.write(`release: ${message}\n`);
  process.exit(code);
}

function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

function parse(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        version: { type: 'string' },
        registry: { type: 'string' },
        key: { type: 'string' },
        keyless: { type: 'boolean', default: false },
        identity: { type: 'string' },
        issuer: { type: 'string' },
        'plain-http': { type: 'boolean', default: false },
        'image-layout': { type: 'string' },
        out: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (err) {
    fail(2, `${(err as Error).message}\n\n${usage}`);
  }
}

function verification(values: ReturnType<typeof parse>['values']): Verification {
  if (values.key) return { key: path.resolve(values.key) };
  if (values.identity && values.issuer) return { identity: values.identity, issuer: values.issuer };
  fail(2, 'verify needs --key cosign.pub, or --identity and --issuer for a keyless signature');
}

async function verifyCommand(values: ReturnType<typeof parse>['values']): Promise<void> {
  if (!values.version || !values.registry) fail(2, `verify needs --version and --registry\n\n${usage}`);
  const version = formatVersion(parseVersion(values.version));
  const refs = releaseRefs(values.registry, values['plain-http']);
  const tools = releaseTools(root);
  const how = verification(values);
  // The digests come from the signed objects, never trusted from the tags alone: verify the
  // signatures of what the tags point at now, then check the chart pins that image.
  const image = tagDigest(tools, refs, `${refs.imageRepository}:${version}`);
  const chart = tagDigest(tools, refs, `${refs.chartArtifact}:${version}`);
  verifySignature(tools, refs, `${refs.imageRepository}@${image}`, how);
  verifySignature(tools, refs, `${refs.chartArtifact}@${chart}`, how);
  verifySbomAttestation(tools, refs, `${refs.imageRepository}@${image}`, how);
  const check = verifyPublication(tools, refs, version, { image, chart });
  process.stdout.write(
    `verified ${version}: image ${refs.imageRepository}@${image} and chart ${refs.chartRef}@${chart} are signed, the SBOM attestation is signed, ` +
      `the chart pins that image; ${check.helm.join('; ')}\n`,
  );
}

async function releaseCommand(values: ReturnType<typeof parse>['values']): Promise<void> {
  if (!values.version || !values.registry) fail(2, `release needs --version and --registry\n\n${usage}`);
  if (!values.key === !values.keyless) fail(2, 'choose how to sign: --key cosign.key (key pair) or --keyless (the release workflow)');
  const started = Date.now();
  const step = (what: string) => process.stdout.write(`release: [${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s] ${what}\n`);
  const signing: Signing = values.key ? { key: path.resolve(values.key) } : { keyless: true };
  const refs = releaseRefs(values.registry, values['plain-http']);

  let checked;
  try {
    checked = preflight(root, values.version);
  } catch (err) {
    if (err instanceof ReleaseRefused) fail(3, err.message);
    throw err;
  }
  const version = checked.text;
  const tools = releaseTools(root);
  const already = publishedParts(tools, refs, version);
  if (already.length > 0) fail(3, `${version} is already published (${already.join(', ')}); releases are immutable: cut the next version instead`);
  step(`preflight passed: v${version} at ${checked.commit.slice(0, 12)}${checked.previous ? `, after v${formatVersion(checked.previous)}` : ''}`);

  const out = path.resolve(values.out ?? path.join(root, 'dist', 'release', version));
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(out, { recursive: true });
  let layout = values['image-layout'] ? path.resolve(values['image-layout']) : '';
  if (!layout) {
    step('building lib/ and the operator image (scripts/build-image.sh)');
    run('bash', [path.join(root, 'scripts', 'build-image.sh')], { cwd: root });
    layout = path.join(root, 'dist', 'image', 'oci');
  }
  // A layout built elsewhere must be this version built from this commit.
  for (const labels of layoutLabels(layout)) {
    if (labels.version !== version || labels.revision !== checked.commit) {
      fail(3, `the image in ${layout} is version ${labels.version || '?'} from commit ${labels.revision || '?'}, not ${version} from ${checked.commit}; build it from this tag (omit --image-layout)`);
    }
  }
  const sbomFile = path.join(out, 'sbom.cdx.json');
  fs.writeFileSync(sbomFile, `${JSON.stringify(sbomFromRepo(root, version), null, 2)}\n`);
  fs.writeFileSync(path.join(out, 'image-index.json'), fs.readFileSync(path.join(layout, 'blobs', ...layoutIndexDigest(layout).split(':'))));

  step(`pushing the image index to ${refs.imageRepository}:${version}`);
  const image = pushImage(tools, refs, layout, version);
  const tgz = packageChart(tools, path.join(root, 'charts', 'nebari-llm-serving'), refs, image, out);
  step(`pushing the chart ${path.basename(tgz)} to ${refs.chartRepository}`);
  const chart = pushChart(tools, refs, tgz, version);

  step('signing the image and the chart by digest, attesting the SBOM');
  signArtifact(tools, refs, `${refs.imageRepository}@${image}`, signing);
  signArtifact(tools, refs, `${refs.chartArtifact}@${chart}`, signing);
  attestSbom(tools, refs, `${refs.imageRepository}@${image}`, sbomFile, signing);

  step('verifying publication with helm v3 and v4, crane and cosign');
  const check = verifyPublication(tools, refs, version, { image, chart });
  if ('key' in signing) {
    const pub = signing.key.replace(/\.key$/, '.pub');
    if (fs.existsSync(pub)) {
      verifySignature(tools, refs, `${refs.imageRepository}@${image}`, { key: pub });
      verifySignature(tools, refs, `${refs.chartArtifact}@${chart}`, { key: pub });
      verifySbomAttestation(tools, refs, `${refs.imageRepository}@${image}`, { key: pub });
    } else {
      step(`no ${pub} beside the key: signatures written but not verified here`);
    }
  }

  const notes = releaseNotes({
    version,
    changelog: fs.readFileSync(path.join(root, 'CHANGELOG.md'), 'utf8'),
    upgrading: fs.readFileSync(path.join(root, 'docs', 'upgrading.md'), 'utf8'),
    imageRef: refs.imageRepository,
    imageDigest: image,
    chartRef: refs.chartRef,
    chartDigest: chart,
  });
  fs.writeFileSync(path.join(out, 'release-notes.md'), notes);
  const files = fs.readdirSync(out).filter((f) => f !== 'SHA256SUMS').sort();
  fs.writeFileSync(path.join(out, 'SHA256SUMS'), checksumsFile(files.map((name) => ({ name, sha256: sha256File(path.join(out, name)) }))));

  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const sizes = Object.entries(check.platformBytes).map(([p, b]) => `${p} ${mb(b)}`).join(', ');
  process.stdout.write(
    [
      `released ${version} in ${seconds} s${checked.version.rc !== undefined ? ' (release candidate)' : ''}`,
      `  image  ${refs.imageRepository}:${version}@${image} (compressed: ${sizes})`,
      `  chart  ${refs.chartRef} ${version}@${chart} (${(fs.statSync(tgz).size / 1024).toFixed(1)} KiB)`,
      `  files  ${out}: ${fs.readdirSync(out).sort().join(', ')}`,
      `  upgrade steps: ${upgradeSteps(fs.readFileSync(path.join(root, 'docs', 'upgrading.md'), 'utf8'), version) ? 'from docs/upgrading.md' : 'none beyond nls upgrade'}`,
      ...check.helm.map((h) => `  ${h}`),
      '',
    ].join('\n'),
  );
}

async function main(): Promise<void> {
  const { values, positionals } = parse(process.argv.slice(2));
  if (values.help) {
    process.stdout.write(`${usage}\n`);
    return;
  }
  if (positionals.length > 1 || (positionals[0] && positionals[0] !== 'verify')) fail(2, `unknown command ${positionals.join(' ')}\n\n${usage}`);
  if (positionals[0] === 'verify') await verifyCommand(values);
  else await releaseCommand(values);
}

main().catch((err: Error) => fail(1, err.message));
