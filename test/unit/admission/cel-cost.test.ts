// The offline CEL cost estimate against Kubernetes 1.32's own: every rule and messageExpression of
// the committed CRDs priced as the API server prices them (the expected figures come from the real
// v0.32.13 code, stored in cel-cost.oracle-1.32.json because that program cannot run here), the
// CRDs 1.32 refused (issue 35) refused with the same factors, and a function the estimator does
// not know reported rather than guessed.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { crdObjects } from '../../../src/api/kinds';
import { celCostProblems, celCostReport, costFactor, schemaDecl } from '../../../src/admission/cel-cost';
import { crdCostProblems } from '../../../src/admission';

const root = path.resolve(__dirname, '../../..');
// Figures as decimal strings: uint64 estimates beyond 2^53 survive JSON.
type Row = [path: string, maxCost: string, cardinality: string, cost: string];
const oracle = JSON.parse(fs.readFileSync(path.join(__dirname, 'cel-cost.oracle-1.32.json'), 'utf8')) as {
  current: Record<string, Row[]>;
  oldTotals: Record<string, Record<string, number>>;
  syntheticSchema: Record<string, unknown>;
  synthetic: Row[];
};
type Crd = Parameters<typeof celCostReport>[0];
const crdFile = (file: string) => parse(fs.readFileSync(path.join(root, 'crds', file), 'utf8')) as Crd;
const files = Object.keys(oracle.current);

const rows = (crd: Crd): Row[] =>
  celCostReport(crd)
    .expressions.map((e): Row => [e.path, `${e.maxCost}`, `${e.cardinality}`, `${e.cost}`])
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));

test('the oracle covers every CRD file', () => {
  expect(files.sort()).toEqual(fs.readdirSync(path.join(root, 'crds')).sort());
  expect(Object.values(oracle.current).flat()).toHaveLength(162);
});

test.each(files)('%s: every rule and messageExpression costs what Kubernetes 1.32 estimates', (file) => {
  const crd = crdFile(file);
  expect(rows(crd)).toEqual(oracle.current[file]);
  expect(celCostReport(crd).unmodelled).toEqual([]);
  expect(celCostProblems(crd)).toEqual([]);
});

test('the generated CRDs pass, and the check is computed once per process', () => {
  expect(crdObjects().flatMap((crd) => celCostProblems(crd))).toEqual([]);
  expect(crdCostProblems()).toEqual([]);
  expect(crdCostProblems()).toBe(crdCostProblems());
});

// The quantity rule of 1035346 (moved to the webhook by 8606b0d), back on the four resource maps.
const QUANTITY_RULE = "!string(self).startsWith('-') && !string(self).matches('^[+]?(0+[.]?0*|[.]0+)([^0-9.].*)?$')";
type SchemaNode = { [key: string]: unknown; properties: Record<string, SchemaNode>; additionalProperties: SchemaNode };
function withQuantityRule(file: string): { crd: Crd; paths: string[] } {
  const crd = crdFile(file) as unknown as { metadata: { name: string }; spec: { versions: { name: string; schema: { openAPIV3Schema: SchemaNode } }[] } };
  const paths: string[] = [];
  crd.spec.versions.forEach((version, index) => {
    let spec = version.schema.openAPIV3Schema.properties.spec;
    let at = `spec.versions[${index}].schema.openAPIV3Schema.properties[spec]`;
    // v1beta1 AgentDeployments nest the container under spec.container
    if (file.includes('agentdeployments') && spec.properties.container?.properties?.resources) {
      spec = spec.properties.container;
      at += '.properties[container]';
    }
    for (const map of ['requests', 'limits']) {
      const values = spec.properties.resources.properties[map].additionalProperties;
      expect(values['x-kubernetes-int-or-string']).toBe(true);
      expect(values['x-kubernetes-validations']).toBeUndefined();
      values['x-kubernetes-validations'] = [{ rule: QUANTITY_RULE, message: `spec.resources.${map}: every quantity must be above zero` }];
      paths.push(`${at}.properties[resources].properties[${map}].additionalProperties.x-kubernetes-validations[0].rule`);
    }
  });
  return { crd, paths };
}

test.each([
  ['llm.nebari.dev_llmmodels.yaml', '1.164347x'],
  ['llm.nebari.dev_agentdeployments.yaml', '1.129550x'],
])('%s of 1035346 is refused as Kubernetes 1.32 refused it: 5.5x per quantity rule, %s in total', (file, totalFactor) => {
  const { crd, paths } = withQuantityRule(file);
  const report = celCostReport(crd);
  // An int-or-string is sized as a whole request (3145726 bytes), 16 of them per map.
  for (const p of paths) expect(report.expressions.find((e) => e.path === p)).toMatchObject({ maxCost: 3460308n, cardinality: 16n, cost: 55364928n });
  expect(Object.fromEntries(report.totals.map((t) => [t.path.split('.schema')[0], Number(t.total)]))).toEqual(oracle.oldTotals[file]);
  const problems = celCostProblems(crd);
  expect(problems).toHaveLength(paths.length + 2);
  for (const p of paths) {
    expect(problems).toContain(
      `CustomResourceDefinition ${crd.metadata.name}: ${p}: estimated rule cost 55364928 (3460308 × cardinality 16) exceeds the Kubernetes 1.32 budget of 10000000 by factor of 5.5x; Kubernetes 1.32 refuses the CRD (add maxLength, maxItems or maxProperties, simplify the rule, or move the check to the webhook)`,
    );
  }
  for (const t of report.totals) {
    expect(problems).toContain(
      `CustomResourceDefinition ${crd.metadata.name}: ${t.path}: estimated rule cost total ${t.total} exceeds the Kubernetes 1.32 budget of 100000000 for an entire schema by factor of ${totalFactor}; Kubernetes 1.32 refuses the CRD`,
    );
  }
});

test('a CRD exercising the other modelled constructs costs what Kubernetes 1.32 estimates', () => {
  const crd = { metadata: { name: 'tests.example.com' }, spec: { versions: [{ name: 'v1', schema: { openAPIV3Schema: oracle.syntheticSchema } }] } };
  expect(rows(crd)).toEqual(oracle.synthetic);
  expect(celCostReport(crd).unmodelled).toEqual([]);
  // 1.32 refused rules 20, 21 and 24 (unbounded lists), messageExpression 29 and the total.
  expect(celCostProblems(crd).map((p) => p.split(': ')[1])).toEqual([
    'spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[20].rule',
    'spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[21].rule',
    'spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[24].rule',
    'spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[29].messageExpression',
    'spec.versions[0].schema.openAPIV3Schema',
  ]);
});

test('passthroughmodels of 1035346 was accepted, with the same totals', () => {
  const report = celCostReport(crdFile('llm.nebari.dev_passthroughmodels.yaml'));
  expect(Object.fromEntries(report.totals.map((t) => [t.path.split('.schema')[0], Number(t.total)]))).toEqual(oracle.oldTotals['llm.nebari.dev_passthroughmodels.yaml']);
});

function oneRuleCrd(rule: string, node: Record<string, unknown>, messageExpression?: string): Crd {
  return {
    metadata: { name: 'tests.example.com' },
    spec: {
      versions: [
        {
          name: 'v1',
          schema: { openAPIV3Schema: { type: 'object', properties: { spec: { ...node, 'x-kubernetes-validations': [{ rule, ...(messageExpression ? { messageExpression } : {}) }] } } } },
        },
      ],
    },
  };
}

test('a function or construct the estimator does not model is a problem naming it, never a guess', () => {
  const list = { type: 'array', maxItems: 4, items: { type: 'string', maxLength: 8 } };
  expect(celCostProblems(oneRuleCrd("self.map(x, x + 'a').size() > 0", list))).toEqual([]);
  const [problem] = celCostProblems(oneRuleCrd("self.join(',') != ''", list));
  expect(problem).toBe(
    "CustomResourceDefinition tests.example.com: spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: the offline CEL cost estimator does not model function join, so it cannot tell whether Kubernetes 1.32 accepts the rule's cost; teach src/admission/cel-cost.ts its estimate",
  );
  expect(celCostProblems(oneRuleCrd('self.all(x, quantity(x).isGreaterThan(quantity("0")))', list))[0]).toContain('does not model function quantity');
  expect(celCostProblems(oneRuleCrd('true', list, 'self.join(",")'))[0]).toContain('messageExpression: the offline CEL cost estimator does not model function join');
  expect(celCostProblems(oneRuleCrd('self.size() >', list))[0]).toContain('the offline CEL cost estimator cannot parse it');
});

test('sizes follow the schema: maxLength × 4, the longest enum value, a whole request otherwise', () => {
  expect(schemaDecl({ type: 'string', maxLength: 10 }, false)?.maxElements).toBe(40n);
  expect(schemaDecl({ type: 'string', enum: ['a', 'abcd'] }, false)?.maxElements).toBe(4n);
  expect(schemaDecl({ type: 'string' }, false)?.maxElements).toBe(3145726n);
  expect(schemaDecl({ 'x-kubernetes-int-or-string': true, maxLength: 64 }, false)?.maxElements).toBe(3145726n);
  // a list of unbounded strings holds as many "" as fit: (3 MiB - 2) / 3
  expect(schemaDecl({ type: 'array', items: { type: 'string' } }, false)?.maxElements).toBe(1048575n);
  // an unbounded list multiplies a rule below it by what fits in a request
  const rule = "self.matches('^a$')";
  const nested = oneRuleCrd('true', { type: 'array', items: { type: 'string', maxLength: 1, 'x-kubernetes-validations': [{ rule }] } });
  const cost = celCostReport(nested).expressions.find((e) => e.path.endsWith('items.x-kubernetes-validations[0].rule'));
  expect(cost).toMatchObject({ cardinality: 1048576n });
});

test('factors read as the API server prints them', () => {
  expect(costFactor(55364928n, 10000000n)).toBe('5.5x');
  expect(costFactor(116434663n, 100000000n)).toBe('1.164347x');
  expect(costFactor(10n ** 12n, 10000000n)).toBe('more than 100x');
});
