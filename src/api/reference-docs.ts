// docs/crd-reference.md, generated from the same schemas as the CRDs: every field with its type,
// default, bounds and description, and every CEL rule with the message users see.
import type { GeneratedFile } from '../generated-file';
import { generatedHeader } from '../generated-file';
import { API_CATEGORY, API_GROUP, API_VERSION, API_VERSION_V1BETA1 } from './common';
import type { CelRule } from './common';
import { rootSchema } from './crd';
import type { JsonSchema, KindDefinition } from './crd';
import { KIND_DEFINITIONS } from './kinds';

/** One documented field. */
interface FieldRow {
  path: string;
  type: string;
  required: boolean;
  details: string[];
  description: string;
  rules: CelRule[];
}

/** A human-readable type: `string`, `[]object`, `map[string]string`, `int-or-string`, ... */
export function typeName(schema: JsonSchema): string {
  if (schema['x-kubernetes-int-or-string'] === true) return 'int-or-string';
  if (schema.type === 'array') return `[]${typeName((schema.items as JsonSchema) ?? {})}`;
  if (schema.type === 'object') {
    if (typeof schema.additionalProperties === 'object' && schema.additionalProperties !== null) {
      return `map[string]${typeName(schema.additionalProperties as JsonSchema)}`;
    }
    if (schema['x-kubernetes-preserve-unknown-fields'] === true && !schema.properties) return 'object (free-form)';
    return 'object';
  }
  return String(schema.type ?? 'any');
}

function constraints(schema: JsonSchema): string[] {
  const out: string[] = [];
  if (schema.default !== undefined) out.push(`default \`${JSON.stringify(schema.default)}\``);
  if (Array.isArray(schema.enum)) out.push(`one of ${schema.enum.map((v) => `\`${String(v)}\``).join(', ')}`);
  if (schema.minimum !== undefined || schema.maximum !== undefined) out.push(`range ${schema.minimum ?? '−∞'}…${schema.maximum ?? '∞'}`);
  if (schema.minLength !== undefined) out.push(`min length ${String(schema.minLength)}`);
  if (schema.maxLength !== undefined) out.push(`max length ${String(schema.maxLength)}`);
  if (schema.maxItems !== undefined) out.push(`max ${String(schema.maxItems)} items`);
  if (schema.maxProperties !== undefined) out.push(`max ${String(schema.maxProperties)} keys`);
  if (schema.pattern !== undefined) out.push(`pattern \`${String(schema.pattern)}\``);
  if (schema['x-kubernetes-list-type'] === 'map') out.push(`list map keyed by ${(schema['x-kubernetes-list-map-keys'] as string[]).join(', ')}`);
  return out;
}

const isSchema = (value: unknown): value is JsonSchema => typeof value === 'object' && value !== null;

/** Every field under `schema` in document order, depth first. */
export function fieldRows(schema: JsonSchema, prefix = ''): FieldRow[] {
  const rows: FieldRow[] = [];
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const properties = (schema.properties as Record<string, JsonSchema> | undefined) ?? {};
  for (const [name, child] of Object.entries(properties)) {
    const path = prefix ? `${prefix}.${name}` : name;
    rows.push({
      path,
      type: typeName(child),
      required: required.has(name),
      details: constraints(child),
      description: String(child.description ?? ''),
      // Rules on list items and map values (which have no row of their own) are shown with the field.
      rules: [child, child.items, child.additionalProperties].flatMap((s) => (isSchema(s) ? ((s['x-kubernetes-validations'] as CelRule[] | undefined) ?? []) : [])),
    });
    rows.push(...fieldRows(child, path));
    const items = child.items as JsonSchema | undefined;
    if (items?.properties) rows.push(...fieldRows(items, `${path}[]`));
  }
  return rows;
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** What a rule tells the user: its message, or its message expression when the message is computed. */
function ruleText(rule: CelRule): string {
  return rule.message ?? `computed: \`${rule.messageExpression ?? ''}\``;
}

function kindSection(def: KindDefinition): string {
  // v1beta1, the version to write; the v1alpha1 names of moved fields are in api-versions.md.
  const root = rootSchema(def.v1beta1Schema ?? def.schema);
  const lines: string[] = [];
  lines.push(`## ${def.kind}`, '');
  lines.push(String(root.description ?? ''), '');
  lines.push(
    `\`apiVersion: ${API_GROUP}/${API_VERSION_V1BETA1}\`, \`kind: ${def.kind}\`, namespaced; plural \`${def.plural}\`, ` +
      `short name${def.shortNames.length > 1 ? 's' : ''} ${def.shortNames.map((s) => `\`${s}\``).join(', ')}, category \`${API_CATEGORY}\`; status subresource.`,
    '',
  );
  lines.push('`kubectl get` columns: ' + def.printerColumns.map((c) => `${c.name} (\`${c.jsonPath}\`${c.priority ? ', wide only' : ''})`).join(', ') + '.', '');

  const rootRules = (root['x-kubernetes-validations'] as CelRule[] | undefined) ?? [];
  const rows = fieldRows(root).filter((r) => !['apiVersion', 'kind', 'metadata'].includes(r.path));
  const ruleRows = [...rootRules.map((rule) => ({ path: '(object)', rule })), ...rows.flatMap((r) => r.rules.map((rule) => ({ path: r.path, rule })))];

  lines.push(`### Fields`, '');
  lines.push('| Field | Type | Required | Constraints | Description |', '|---|---|---|---|---|');
  for (const row of rows) {
    lines.push(`| \`${row.path}\` | ${cell(row.type)} | ${row.required ? 'yes' : ''} | ${cell(row.details.join('; '))} | ${cell(row.description)} |`);
  }
  lines.push('', `### Validation rules`, '');
  lines.push(
    'The API server checks these CEL rules on every create and update; rules that compare with `oldSelf` run on updates only. ' +
      'Rules that need other objects (Secrets, other models, namespaces) are checked by the admission webhook, and so is ' +
      'every quantity of `resources.requests` and `limits` being above zero (as a CEL rule on those int-or-string values it would exceed the budget of Kubernetes 1.33). ' +
      '`nls validate FILE…` and custom builds run the same defaults, schema, rules and webhook checks offline ([offline validation](offline-validation.md)).',
    '',
  );
  lines.push('| On | Rule | Message |', '|---|---|---|');
  for (const { path, rule } of ruleRows) lines.push(`| \`${path}\` | \`${cell(rule.rule)}\` | ${cell(ruleText(rule))} |`);
  lines.push('');
  return lines.join('\n');
}

/**
 * Where this API differs from the upstream Nebari pack's llm.nebari.dev/v1alpha1 kinds. Every
 * upstream field keeps its name, meaning and default; these are the added checks and fields.
 */
export const UPSTREAM_DIFFERENCES: readonly string[] = [
  'The upstream shape is this API\'s `v1alpha1`, still served; `v1beta1` renames and regroups some of its fields ([api-versions.md](api-versions.md)).',
  'New fields: `LLMModel.spec.provider` (name, overrides) and `status.provider`; `PassthroughModel.spec.provider.backend.type` values `Anthropic` and `AzureOpenAI` with `backend.azureOpenAI`, and `status.provider`; status phases `Pending` and `Degraded` for PassthroughModel.',
  'Checks the upstream webhook made are now CEL rules in the CRD, so they hold even while no webhook runs: access (public or a group), PassthroughModel hostname shape, at least one routed model, not both endpoints disabled, Bedrock region and credential rules, the LLMModel subdomain length.',
  'Hostnames that older upstream webhooks let through (underscores, empty labels, URLs, ports, paths, whitespace) are refused; correct them before upgrading. Upper case and one trailing dot are still accepted.',
  '`spec.model.name`, `spec.model.source` and `spec.provider.name` of an LLMModel and `spec.provider.backend.type` of a PassthroughModel are immutable: the upstream operator recreated the serving Deployment on such changes; here a new object is the way to switch.',
  'Bounds keep CEL cost estimable and stop obvious mistakes: at most 64 GPUs and 32 replicas per LLMModel, parallelism 1 to 64, 64 access groups, 128 declared models, 128 engine arguments, and maximum lengths on strings. `spec.model.image` is required when `spec.model.source` is `oci`.',
];

/** The Markdown reference of every kind. */
export function crdReferenceMarkdown(): string {
  const header = `<!-- ${generatedHeader().replace(/^# /, '').trim()} -->\n`;
  const intro = [
    '# CRD reference',
    '',
    `All kinds are in API group \`${API_GROUP}\`, version \`${API_VERSION_V1BETA1}\`, and namespaced. ` +
      'Every field below comes from the TypeBox schemas in `src/api/`, the same source as the CRDs in `crds/`. ' +
      `\`${API_VERSION}\` is still served and converted; where its fields differ is listed in [api-versions.md](api-versions.md).`,
    '',
    '| Kind | Plural | Short names | What it is |',
    '|---|---|---|---|',
    ...KIND_DEFINITIONS.map((d) => `| [${d.kind}](#${d.kind.toLowerCase()}) | \`${d.plural}\` | ${d.shortNames.map((s) => `\`${s}\``).join(', ')} | ${cell(String(d.schema.description ?? ''))} |`),
    '',
  ].join('\n');
  const differences = ['## Differences from the upstream Nebari pack', '', ...UPSTREAM_DIFFERENCES.map((d) => `- ${d}`), ''].join('\n');
  return `${header}${intro}\n${KIND_DEFINITIONS.map(kindSection).join('\n')}\n${differences}`;
}

/** `docs/crd-reference.md`. */
export function crdReferenceDoc(): GeneratedFile {
  return { path: 'docs/crd-reference.md', content: crdReferenceMarkdown() };
}
