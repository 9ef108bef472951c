// `nls validate FILE…`: the admission the cluster would run (CRD defaults, schema, CEL rules and
// the webhook checks), offline, for every llm.nebari.dev object in YAML or JSON files, multi-
// document streams and directories. Meant for the CI of GitOps repositories: exit 0 when every
// object would be admitted, 1 when one would be rejected, 2 for bad arguments or unreadable files.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { AdmissionResult } from '../../admission';
import { editDistance } from '../../chart/value-problems';
import { allowedImageEntryProblem } from '../../webhook/image-policy';
import { API_GROUP, API_VERSION_V1BETA1 } from '../../api/common';
import { parseFlags } from '../flags';
import { ExitCode, UsageError } from '../phases';
import { commandOutput } from '../output';

/** The chart's default release namespace (`helm install -n nebari-llm-serving-system`). */
const DEFAULT_OPERATOR_NAMESPACE = 'nebari-llm-serving-system';

export const validateUsage = `Usage:
  nls validate [--namespace NS] [--watch-namespaces NS,NS…] [--allowed-images LIST] [--output text|json] FILE|DIR…
Admits every llm.nebari.dev object in the files (YAML or JSON, multi-document streams; directories
are read recursively for *.yaml, *.yml and *.json) offline, as the API server with the CRDs and the
admission webhooks would: defaults, schema, CEL rules and webhook checks; an LLMModel its provider
refuses (BuildFailed in the cluster) is rejected with the operator's message. The objects of the
input are the cluster state (models an AgentDeployment references, names a model may not share);
Secret access is not reviewed offline. Objects without a namespace are placed in --namespace.
  --namespace NS              the operator namespace (default ${DEFAULT_OPERATOR_NAMESPACE})
  --watch-namespaces LIST     further namespaces whose AgentDeployments are reconciled (chart value watchNamespaces)
  --allowed-images LIST       image prefixes or references tenants may run (chart value webhook.allowedImages); default all
  --output text|json          one line per problem (default), or a JSON report
A CRD rule whose estimated CEL cost Kubernetes 1.32 would refuse is reported on its own line.
Exit 0 when every object is admitted, 1 when any is rejected (or a CRD would be refused), 2 on bad
arguments or unreadable files.`;

/** One object found in the input, where it came from. */
export interface SourcedObject {
  readonly file: string;
  /** 0-based index of the YAML document in the file. */
  readonly document: number;
  readonly object: Record<string, unknown>;
}

export interface ObjectVerdict {
  readonly file: string;
  readonly document: number;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly admitted: boolean;
  readonly problems: ReadonlyArray<{ field: string; message: string; source: string }>;
  readonly warnings: readonly string[];
}

const manifestFile = /\.(ya?ml|json)$/i;

/** The files to read: each FILE as given, each DIR's manifest files recursively (hidden entries skipped), sorted. */
export function inputFiles(paths: readonly string[]): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.name.startsWith('.')) continue;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (manifestFile.test(entry.name)) files.push(full);
    }
  };
  for (const p of paths) {
    if (!fs.existsSync(p)) throw new UsageError(`validate: ${p} does not exist`);
    if (fs.statSync(p).isDirectory()) walk(p);
    else files.push(p);
  }
  return files;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Every document of a file as objects; `kind: List` items are taken one by one. Throws UsageError for unparsable text. */
export function readObjects(file: string, text: string): SourcedObject[] {
  const out: SourcedObject[] = [];
  parseAllDocuments(text).forEach((doc, document) => {
    if (doc.errors.length > 0) throw new UsageError(`validate: ${file} document ${document + 1} is not valid YAML: ${doc.errors[0].message.split('\n')[0]}`);
    const value: unknown = doc.toJS();
    if (!isRecord(value)) return;
    if (typeof value.kind === 'string' && value.kind.endsWith('List') && Array.isArray(value.items)) {
      for (const item of value.items) if (isRecord(item)) out.push({ file, document, object: item });
    } else out.push({ file, document, object: value });
  });
  return out;
}

const identity = (o: Record<string, unknown>) => {
  const metadata = isRecord(o.metadata) ? o.metadata : {};
  return { kind: String(o.kind ?? ''), namespace: String(metadata.namespace ?? ''), name: String(metadata.name ?? '') };
};

/**
 * Why an object that is not of our group looks meant to be (one of our kinds, or a group a typo
 * away from ours), or undefined. Skipping it silently would pass a manifest the cluster never sees
 * as ours.
 */
export function misspelledGroupProblem(object: Record<string, unknown>, kinds: readonly string[]): string | undefined {
  const apiVersion = typeof object.apiVersion === 'string' ? object.apiVersion : '';
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/', 2) : ['', apiVersion];
  if (group === API_GROUP) return undefined;
  const ourKind = typeof object.kind === 'string' && kinds.includes(object.kind);
  if (!ourKind && (group === '' || editDistance(group, API_GROUP) > 2)) return undefined;
  const meant = `${API_GROUP}/${version || API_VERSION_V1BETA1}`;
  return `apiVersion: "${apiVersion}" is not an API version of ${API_GROUP}, so nothing would admit this ${String(object.kind)} as one; did you mean ${meant}?`;
}

/** Admits every object of our group among `objects`; the others are ignored, unless they look misspelled (see misspelledGroupProblem). */
export async function validateObjects(
  objects: readonly SourcedObject[],
  operatorNamespace: string,
  watchNamespaces: readonly string[],
  allowedImages: readonly string[] = [],
): Promise<ObjectVerdict[]> {
  // Loaded here: the CEL and schema machinery is only needed by this command.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { admit, admittedKinds, isOurObject } = require('../../admission') as typeof import('../../admission');
  const misspelled: ObjectVerdict[] = [];
  for (const o of objects) {
    const problem = isOurObject(o.object) ? undefined : misspelledGroupProblem(o.object, admittedKinds);
    if (!problem) continue;
    const id = identity(o.object);
    misspelled.push({ file: o.file, document: o.document, ...id, namespace: id.namespace || operatorNamespace, admitted: false, problems: [{ field: 'apiVersion', message: problem, source: 'input' }], warnings: [] });
  }
  const ours = objects
    .filter((o) => isOurObject(o.object))
    .map((o) => {
      const metadata = isRecord(o.object.metadata) ? o.object.metadata : {};
      const namespace = typeof metadata.namespace === 'string' && metadata.namespace ? metadata.namespace : operatorNamespace;
      return { ...o, object: { ...o.object, metadata: { ...metadata, namespace } } };
    });
  const seen = new Map<string, SourcedObject>();
  const verdicts: ObjectVerdict[] = [];
  for (const entry of ours) {
    const others = ours.filter((o) => o !== entry).map((o) => o.object);
    const result: AdmissionResult = await admit(entry.object, { operatorNamespace, agentNamespaces: watchNamespaces, objects: others, allowedImages });
    const id = identity(entry.object);
    const key = `${id.kind}/${id.namespace}/${id.name}`;
    const first = seen.get(key);
    const problems = result.problems.map(({ field, message, source }) => ({ field, message, source: source as string }));
    if (first) problems.push({ field: 'metadata.name', message: `${id.kind} ${id.namespace}/${id.name} is also declared in ${first.file} (document ${first.document + 1}); keep one`, source: 'input' });
    else seen.set(key, entry);
    verdicts.push({ file: entry.file, document: entry.document, ...id, admitted: problems.length === 0, problems, warnings: result.warnings });
  }
  return [...misspelled, ...verdicts];
}

/** One line per problem and warning, then a summary line. */
export function formatVerdicts(verdicts: readonly ObjectVerdict[]): string[] {
  const lines: string[] = [];
  for (const v of verdicts) {
    const where = `${v.file}: ${v.kind} ${v.namespace}/${v.name}`;
    for (const p of v.problems) lines.push(`${where}: ${p.source === 'webhook' || p.source === 'provider' || p.source === 'input' || !p.field ? p.message : `${p.field}: ${p.message}`}`);
    for (const w of v.warnings) lines.push(`${where}: warning: ${w}`);
  }
  const rejected = verdicts.filter((v) => !v.admitted).length;
  if (verdicts.length === 0) lines.push(`warning: no ${API_GROUP} object in the input; check the paths and each object's apiVersion`);
  lines.push(`${verdicts.length} object(s) checked: ${verdicts.length - rejected} admitted, ${rejected} rejected`);
  return lines;
}

export async function runValidate(args: string[], out: (line: string) => void = commandOutput): Promise<number> {
  let files: string[];
  let operatorNamespace: string;
  let watchNamespaces: string[];
  let allowedImages: string[];
  let output: string;
  let objects: SourcedObject[];
  try {
    const flags = parseFlags('validate', args, {
      namespace: { type: 'string' },
      'watch-namespaces': { type: 'string' },
      'allowed-images': { type: 'string' },
      output: { type: 'string' },
    });
    if (flags.positionals.length === 0) throw new UsageError(`validate: name at least one file or directory\n${validateUsage}`);
    output = flags.values.output ?? 'text';
    if (output !== 'text' && output !== 'json') throw new UsageError(`validate: --output "${output}" is not supported; use text or json`);
    operatorNamespace = flags.values.namespace ?? DEFAULT_OPERATOR_NAMESPACE;
    watchNamespaces = (flags.values['watch-namespaces'] ?? '').split(',').map((n) => n.trim()).filter(Boolean);
    allowedImages = (flags.values['allowed-images'] ?? '').split(',').map((n) => n.trim()).filter(Boolean);
    for (const entry of allowedImages) {
      const problem = allowedImageEntryProblem(entry);
      if (problem) throw new UsageError(`validate: --allowed-images: ${problem}`);
    }
    files = inputFiles(flags.positionals);
    objects = files.flatMap((file) => readObjects(file, fs.readFileSync(file, 'utf8')));
  } catch (error) {
    out(`error: ${(error as Error).message}`);
    return error instanceof UsageError ? ExitCode.usage : ExitCode.error;
  }
  const verdicts = await validateObjects(objects, operatorNamespace, watchNamespaces, allowedImages);
  // Not about the input: a CRD this nls carries that Kubernetes 1.32 would refuse for its CEL cost.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const crdProblems = (require('../../admission') as typeof import('../../admission')).crdCostProblems();
  if (output === 'json') out(JSON.stringify({ files: files.length, objects: verdicts, crdProblems }, null, 2));
  else for (const line of [...crdProblems, ...formatVerdicts(verdicts)]) out(line);
  return crdProblems.length === 0 && verdicts.every((v) => v.admitted) ? ExitCode.ok : 1;
}
