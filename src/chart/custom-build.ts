// Custom builds (`npm run synth -- --config my-build.yaml`): chart values overrides and static
// models, rendered into a separate output a GitOps repository can consume. Every problem in the
// config is reported with the key that causes it.
import { Type } from '@sinclair/typebox';
import { App, Chart } from 'cdk8s';
import { stringify } from 'yaml';
import { CHART_NAME, fullname, gatewayContextJson, plainCopy, quotasJson, StaticModels } from '../../constructs';
import { StaticModelError, type StaticModel } from '../../constructs/models';
import { defaultTierProblem, jwtAudiencesProblem } from '../../constructs/helpers';
import { PORTAL_REQUIRED } from '../../constructs/portal';
import { API_GROUP_VERSION, API_GROUP_VERSION_V1BETA1, CLEANUP_FINALIZER } from '../api/common';
import type { GatewayContext } from '../translate/gateway';
import { generatedHeader } from '../generated-file';
import { manifestStream } from './bundles';
import { mergeValues } from './merge-values';
import { DEFAULT_NAMESPACE, DEFAULT_RELEASE_NAME, plainObjects } from './render';
import { crdObjects } from '../api/kinds';
import { ChartValues, defaultValues, ValuesSchema } from './values-schema';
import type { CustomBuildModel } from './build-config';
import { schemaProblems } from './value-problems';

export const CustomBuildSchema = Type.Object(
  {
    release: Type.Optional(
      Type.Object(
        {
          name: Type.Optional(Type.String({ pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', maxLength: 53, description: 'Release name.' })),
          namespace: Type.Optional(Type.String({ pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', maxLength: 63, description: 'Release namespace.' })),
        },
        { additionalProperties: false },
      ),
    ),
    values: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'Chart values overriding the defaults (checked against values.schema.json).' })),
    models: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }), { description: 'Static LLMModel / PassthroughModel objects.' })),
  },
  { additionalProperties: false },
);

export type { CustomBuildConfig, CustomBuildModel, ValuesOverrides } from './build-config';

export interface CustomBuild {
  readonly releaseName: string;
  readonly namespace: string;
  /** The chart's values for this build: the checkout's defaults with the build's overrides. */
  readonly values: ChartValues;
  /**
   * Only what the build's `values:` sets: what `values.yaml` holds, so on top of a published chart
   * every other value (its signed image pin among them) stays the chart's own.
   */
  readonly overrides: Record<string, unknown>;
  /** The admitted models, as the API server would store them (schema and webhook defaults filled in). */
  readonly models: StaticModel[];
  /** What the cluster would warn about on admission (deprecated versions, rewritten host names), each prefixed with its model. */
  readonly warnings: readonly string[];
}

/** Thrown with every problem of a config, one per line, each naming its key; `warnings` as CustomBuild's. */
export class CustomBuildConfigError extends Error {
  constructor(
    message: string,
    readonly warnings: readonly string[] = [],
  ) {
    super(message);
  }
}

/** Static model kinds (AgentDeployments are not rendered by a custom build). */
const STATIC_KINDS = ['LLMModel', 'PassthroughModel'];

/** Problems of a model's identity that come before admission: group, kind, namespace. */
function modelIdentityProblem(model: Record<string, unknown>, at: string, namespace: string): string | undefined {
  if (model.apiVersion !== API_GROUP_VERSION_V1BETA1 && model.apiVersion !== API_GROUP_VERSION) {
    return `${at}.apiVersion: ${JSON.stringify(model.apiVersion)} is not ${API_GROUP_VERSION_V1BETA1} (or ${API_GROUP_VERSION}, still served)`;
  }
  if (typeof model.kind !== 'string' || !STATIC_KINDS.includes(model.kind)) {
    return `${at}.kind: ${JSON.stringify(model.kind)} is not a static model kind; use LLMModel or PassthroughModel`;
  }
  const meta = (model.metadata ?? {}) as { namespace?: string };
  if (meta.namespace && meta.namespace !== namespace) {
    return `${at}.metadata.namespace: "${meta.namespace}" differs from the release namespace "${namespace}"; models must live in the operator's namespace, so remove it or set release.namespace`;
  }
  return undefined;
}

/**
 * Admits every static model as the cluster would (defaults, CRD schema, CEL rules, webhook rules;
 * the other models of the build are the cluster state). Returns the stored (defaulted) objects or
 * the problems, each prefixed with `models[i]`. Undeclared fields are problems here: the API
 * server would drop them silently, which in a build is almost always a typo.
 */
async function admitModels(models: unknown[], namespace: string, allowedImages: readonly string[]): Promise<{ models: StaticModel[]; problems: string[]; warnings: string[] }> {
  const problems: string[] = [];
  const warnings: string[] = [];
  const candidates: Array<{ index: number; object: Record<string, unknown> }> = [];
  models.forEach((m, index) => {
    if (!isMap(m)) return; // the build schema reports it
    const identity = modelIdentityProblem(m, `models[${index}]`, namespace);
    if (identity) problems.push(identity);
    else candidates.push({ index, object: { ...m, metadata: { ...(m.metadata as object), namespace } } });
  });
  if (candidates.length === 0) return { models: [], problems, warnings };
  // Loaded here so that a build without static models does not load the CEL machinery.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { admit, describeProblem } = require('../admission') as typeof import('../admission');
  const admitted: StaticModel[] = [];
  for (const { index, object } of candidates) {
    const at = `models[${index}]`;
    const others = candidates.filter((c) => c.index !== index).map((c) => c.object);
    const result = await admit(object, { operatorNamespace: namespace, objects: others, allowedImages });
    const own = [
      ...result.unknownFields.map((f) => `${at}.${f}: unknown field; remove it (the API server would drop it)`),
      // A problem with a field reads `models[i].spec.x: …`; one about the whole object `models[i]: …`.
      ...result.problems.map((p) => (p.field ? `${at}.${describeProblem(p)}` : `${at}: ${describeProblem(p)}`)),
    ];
    problems.push(...own);
    // As `nls validate` prints them; unknown fields are problems here, not warnings.
    const name = `${String(object.kind)} ${String((object.metadata as { name?: unknown }).name)}`;
    warnings.push(...result.warnings.filter((w) => !w.startsWith('unknown field "')).map((w) => `${at} (${name}): ${w}`));
    if (own.length === 0) admitted.push(withoutCleanupFinalizer(plainCopy(result.object)) as unknown as StaticModel);
  }
  return { models: admitted, problems, warnings };
}

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The model without the cleanup finalizer the mutating webhook adds on CREATE: that field is the
 * operator's (no field manager owns it once stored), so models.yaml, which the GitOps tool owns,
 * leaves it out, as it leaves out status.
 */
function withoutCleanupFinalizer(model: Record<string, unknown>): Record<string, unknown> {
  const metadata = isMap(model.metadata) ? model.metadata : undefined;
  if (!metadata || !Array.isArray(metadata.finalizers)) return model;
  const finalizers = metadata.finalizers.filter((f) => f !== CLEANUP_FINALIZER);
  const { finalizers: _dropped, ...rest } = metadata;
  return { ...model, metadata: finalizers.length > 0 ? { ...rest, finalizers } : rest };
}

/**
 * A message of the chart's install-time checks (Helm `fail`/`required`), reworded for a build
 * file: the key it names is a key under `values:`, not a `--set` flag.
 */
function inBuildTerms(message: string): string {
  return message.replace(/--set '?([\w.]+)=\{([^}]*)\}'?/g, 'values.$1: [$2]').replace(/--set '?([\w.]+)=([^'\s)]+)'?/g, 'values.$1: $2');
}

/**
 * The chart's install-time checks (what `helm install` stops on after the schema passed), each
 * keyed by the config key to change. A check runs only when the sections it reads have no schema
 * problem (`schemaProblems`, lines starting `values.<section>`).
 */
export function chartValueProblems(values: ChartValues, schemaProblems: readonly string[] = []): string[] {
  const wellFormed = (...sections: string[]) => !schemaProblems.some((p) => sections.some((s) => p.startsWith(`values.${s}.`) || p.startsWith(`values.${s}:`)));
  const problems: Array<[string, string | undefined]> = [];
  if (wellFormed('platform')) problems.push(['platform.jwt.audiences', jwtAudiencesProblem(values.platform.jwt)]);
  if (wellFormed('quotas') && values.quotas.rateLimitBackend) problems.push(['quotas.defaultTier', defaultTierProblem(values.quotas)]);
  if (wellFormed('platform', 'portal') && values.portal.enabled) {
    problems.push(
      ['portal.hostname', values.portal.hostname || values.platform.baseDomain ? undefined : PORTAL_REQUIRED.hostname],
      ['platform.jwt.issuer', values.platform.jwt.issuer ? undefined : PORTAL_REQUIRED.issuer],
      ['portal.oidc.clientId', values.portal.oidc.clientId ? undefined : PORTAL_REQUIRED.clientId],
    );
  }
  return problems.filter(([, p]) => p).map(([key, p]) => `values.${key}: ${inBuildTerms(p!)}`);
}

/** The operator's gateway settings for these values, as the chart hands them over (NLS_GATEWAY_CONTEXT, NLS_QUOTAS). */
function gatewayContextOf(values: ChartValues): GatewayContext {
  const quotas = values.quotas.rateLimitBackend ? { quotas: JSON.parse(quotasJson(values.quotas)) } : {};
  return { ...JSON.parse(gatewayContextJson(values.platform as unknown as Record<string, unknown>)), ...quotas };
}

/** Problems of the models the operator's translation would refuse with these values (BuildFailed in the cluster). */
function translationProblems(models: StaticModel[], values: ChartValues): string[] {
  try {
    new StaticModels(new Chart(new App(), 'check'), 'models', { models, gatewayContext: gatewayContextOf(values), includeModels: false });
    return [];
  } catch (err) {
    if (err instanceof StaticModelError) return err.message.split('\n');
    throw err;
  }
}

/**
 * Checks a parsed config and resolves it into values and defaulted models. Every problem is
 * reported at once: the build schema, the values schema, the chart's install-time checks and
 * each model's admission; the operator's translation of the models once those pass (it depends
 * on them).
 */
export async function resolveCustomBuild(config: unknown): Promise<CustomBuild> {
  const problems = schemaProblems(CustomBuildSchema, config, '');
  const c = (isMap(config) ? config : {}) as Record<string, unknown>;
  const release = isMap(c.release) ? c.release : {};
  const releaseName = typeof release.name === 'string' ? release.name : DEFAULT_RELEASE_NAME;
  const namespace = typeof release.namespace === 'string' ? release.namespace : DEFAULT_NAMESPACE;
  const overrides = isMap(c.values) ? c.values : {};
  const declared = Array.isArray(c.models) ? (c.models as unknown[]) : [];
  const values = mergeValues(defaultValues(), overrides) as ChartValues;
  const valueProblems = schemaProblems(ValuesSchema, values, 'values');
  problems.push(...valueProblems, ...chartValueProblems(values, valueProblems));
  const admitted = await admitModels(declared, namespace, values.webhook?.allowedImages ?? []);
  problems.push(...admitted.problems);
  const models = admitted.models;
  if (declared.length > 0 && !values.platform?.baseDomain) {
    problems.push('values.platform.baseDomain: required when models are declared (endpoint host names derive from it), e.g. example.com');
  }
  const names = declared.map((m) => `${String((m as CustomBuildModel)?.kind)}/${String((m as CustomBuildModel)?.metadata?.name)}`);
  names.forEach((n, i) => {
    if (names.indexOf(n) !== i) problems.push(`models[${i}].metadata.name: ${n} is declared twice`);
  });
  if (problems.length === 0) problems.push(...translationProblems(models.map(committedModel), values));
  if (problems.length > 0) throw new CustomBuildConfigError(problems.join('\n'), admitted.warnings);
  return { releaseName, namespace, values, overrides: structuredClone(overrides), models, warnings: admitted.warnings };
}

/**
 * Argo CD annotations on each committed model: a wave after the chart's objects (the webhook must
 * serve before a model can be admitted) and no dry run while the CRDs do not exist yet. Inert for
 * every other tool. A model's own annotations win.
 */
export const GITOPS_ANNOTATIONS: Readonly<Record<string, string>> = {
  'argocd.argoproj.io/sync-wave': '1',
  'argocd.argoproj.io/sync-options': 'SkipDryRunOnMissingResource=true',
};

/** Where the preview of the derived objects goes, relative to the output directory. */
export const PREVIEW_FILE = 'preview/derived-objects.yaml';

/**
 * A committed model: the admitted object (already as the API server stores it, so a GitOps diff
 * shows no drift) with the Argo CD annotations under its own.
 */
function committedModel(model: StaticModel): StaticModel {
  const annotations = { ...GITOPS_ANNOTATIONS, ...(model.metadata.annotations ?? {}) };
  return { ...model, metadata: { ...model.metadata, annotations } };
}

const MODELS_HEADER = (build: CustomBuild) =>
  `# The model objects of release ${build.releaseName} in namespace ${build.namespace}: commit and apply these (after the chart,\n` +
  '# whose CRDs and webhooks must exist first). The operator derives every gateway object from them and owns those;\n' +
  '# on these objects it writes only status and its finalizer, which this file does not set. See docs/custom-builds.md.\n';

const PREVIEW_HEADER =
  '# PREVIEW ONLY - DO NOT APPLY. The gateway objects the operator derives from models.yaml, for review.\n' +
  '# The operator creates and owns these in the cluster: applying them as well would make a GitOps tool and the\n' +
  '# operator overwrite each other, and they cannot serve on their own (each <model>-external-auth SecurityPolicy\n' +
  '# is Deny with no client rules here; the operator fills them from the <model>-api-keys Secret, and adds the\n' +
  '# owner references to the models). See docs/custom-builds.md.\n';

export interface CustomBuildOptions {
  /** Also write PREVIEW_FILE with the derived gateway objects. @default false */
  readonly preview?: boolean;
  /** Where the files come from, recorded in their header. @default only the generated-file line */
  readonly provenance?: BuildProvenance;
}

/** What made a build's files: enough for a CI to check they were regenerated with the chart the cluster installs. */
export interface BuildProvenance {
  /** The command, e.g. `npm run synth -- --config`. */
  readonly command: string;
  /** The build file, relative to the output directory (so the header does not depend on where the command ran). */
  readonly buildFile: string;
  /** sha256 of the build file's bytes. */
  readonly buildFileSha256: string;
  /** Version of this generator (the package). */
  readonly generatorVersion: string;
  /** Commit of the checkout the generator ran from, with ` (with uncommitted changes)` when dirty; undefined outside a git checkout. */
  readonly commit?: string;
  /** The chart version these files are for: install exactly this one. */
  readonly chartVersion: string;
}

/**
 * The header of a build's files. One `# key: value` line each, so a CI can read them, for
 * example `grep '^# Chart version: ' values.yaml`; nothing time-dependent, so regenerating with
 * the same checkout and build file writes the same bytes.
 */
export function provenanceHeader(p: BuildProvenance): string {
  return (
    generatedHeader(p.command) +
    `# Build file: ${p.buildFile} (sha256 ${p.buildFileSha256})\n` +
    `# Generator: ${CHART_NAME} ${p.generatorVersion}${p.commit ? `, commit ${p.commit}` : ''}\n` +
    `# Chart version: ${p.chartVersion} (install the ${CHART_NAME} chart of this version with these files)\n`
  );
}

/** The custom build's files, relative to its output directory. */
export function customBuildFiles(build: CustomBuild, options: CustomBuildOptions = {}): Record<string, string> {
  const header = options.provenance ? provenanceHeader(options.provenance) : generatedHeader('npm run synth -- --config');
  const gatewayContext = gatewayContextOf(build.values);
  const models = build.models.map(committedModel);
  const render = (derived: boolean) => {
    const chart = new Chart(new App(), derived ? 'derived-objects' : 'static-models');
    // Translates every model either way, so a model the operator cannot serve fails the build.
    new StaticModels(chart, 'models', { models, gatewayContext, includeModels: !derived, includeDerivedObjects: derived });
    return manifestStream(chart.toJson());
  };
  // kubectl has no --create-namespace: the install without Helm carries its Namespace, as deploy/ does (values.yaml stays as the build set it).
  const manifestValues = { ...build.values, namespace: { ...build.values.namespace, create: true } };
  const objects = plainObjects(manifestValues, { releaseName: build.releaseName, namespace: build.namespace });
  return {
    // Only the overrides: the published chart's values.yaml supplies the rest, including the image digest its release pinned.
    'values.yaml':
      `${header}# Release ${build.releaseName} (full name ${fullname(build.values, build.releaseName)}) in ${build.namespace}; use with helm -f.\n` +
      `# Only the values this build sets; every other value is the chart's own (see helm show values).\n${stringify(build.overrides, { lineWidth: 0 })}`,
    'manifests.yaml': `${header}${manifestStream([...crdObjects(), ...objects])}`,
    'models.yaml': `${header}${MODELS_HEADER(build)}${render(false)}`,
    ...(options.preview ? { [PREVIEW_FILE]: `${header}${PREVIEW_HEADER}${render(true)}` } : {}),
  };
}
