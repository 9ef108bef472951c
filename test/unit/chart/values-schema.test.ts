import { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import Ajv from 'ajv';
import { parse } from 'yaml';
import { defaultValues, valuesJsonSchema, ValuesSchema } from '../../../src/chart/values-schema';
import { valuesTable, valuesYaml } from '../../../src/chart/values-file';

/** Every schema node with its dotted path. */
function walk(s: TSchema, path: string, visit: (s: TSchema, path: string) => void): void {
  visit(s, path);
  for (const [k, child] of Object.entries((s.properties ?? {}) as Record<string, TSchema>)) walk(child, path ? `${path}.${k}` : k, visit);
  if (s.items) walk(s.items as TSchema, `${path}[]`, visit);
}

describe('values schema', () => {
  test('every key has a description', () => {
    const missing: string[] = [];
    walk(ValuesSchema, '', (s, path) => {
      if (path && !path.endsWith('[]') && !s.description) missing.push(path);
    });
    expect(missing).toEqual([]);
  });

  test('every object is closed, or a typed map, or an explicit Kubernetes pass-through', () => {
    const passThrough = new Set(['operator.tolerations[]', 'operator.affinity', 'networkPolicy.metricsFrom[]', 'networkPolicy.webhookFrom[]', 'gateway.gateway.listeners[]', 'portal.tolerations[]', 'portal.networkPolicy.from[]']);
    const open: string[] = [];
    walk(ValuesSchema, '', (s, path) => {
      if (s.type !== 'object') return;
      const typedMap = !!s.patternProperties;
      if (s.additionalProperties !== false && !typedMap && !passThrough.has(path)) open.push(path);
    });
    expect(open).toEqual([]);
  });

  test('the defaults satisfy the schema', () => {
    expect([...Value.Errors(ValuesSchema, defaultValues())]).toEqual([]);
  });

  test('values.yaml parses to exactly the defaults and comments every key', () => {
    const text = valuesYaml();
    expect(parse(text)).toEqual(defaultValues());
    const lines = text.split('\n');
    let from = 0;
    const uncommented: string[] = [];
    walk(ValuesSchema, '', (s, path) => {
      if (!path || path.includes('[]') || path.startsWith('gateway.gatewayConfig.extProcResources.')) return;
      const depth = path.split('.').length - 1;
      const key = path.split('.').pop();
      const at = lines.findIndex((l, i) => i >= from && l.startsWith(`${'  '.repeat(depth)}${key}:`));
      if (at < 0 || !/^\s*# /.test(lines[at - 1])) uncommented.push(path);
      else from = at;
    });
    expect(uncommented).toEqual([]);
  });

  test('the README table lists every leaf value', () => {
    const table = valuesTable();
    for (const key of ['operator.replicas', 'webhook.certificates.mode', 'webhook.upgradeGuard.enabled', 'platform.jwt.issuer', 'gateway.gatewayConfig.create']) {
      expect(table).toContain(`| \`${key}\` |`);
    }
  });

  describe('values.schema.json rejects bad values naming the key', () => {
    const ajv = new Ajv({ allErrors: true, strict: false });
    const validate = ajv.compile(valuesJsonSchema());
    const withChange = (change: (v: Record<string, any>) => void) => { // eslint-disable-line @typescript-eslint/no-explicit-any
      const v = structuredClone(defaultValues()) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
      change(v);
      return v;
    };
    const table: Array<[string, unknown, RegExp]> = [
      ['misspelt operator.replica', withChange((v) => { v.operator.replica = 2; }), /\/operator .*"additionalProperty":"replica"/],
      ['replicas of zero', withChange((v) => { v.operator.replicas = 0; }), /\/operator\/replicas/],
      ['unknown certificate mode', withChange((v) => { v.webhook.certificates.mode = 'manual'; }), /\/webhook\/certificates\/mode/],
      ['digest without sha256', withChange((v) => { v.operator.image.digest = 'abc'; }), /\/operator\/image\/digest/],
      ['string for a boolean', withChange((v) => { v.webhook.upgradeGuard.enabled = 'yes'; }), /\/webhook\/upgradeGuard\/enabled/],
      ['issuer that is not https', withChange((v) => { v.platform.jwt.issuer = 'http://kc'; }), /\/platform\/jwt\/issuer/],
      ['top-level typo', withChange((v) => { v.webhooks = {}; }), /"additionalProperty":"webhooks"/],
      ['a label the chart sets itself', withChange((v) => { v.commonLabels = { 'app.kubernetes.io/name': 'x' }; }), /\/commonLabels .*propertyName/],
    ];
    test.each(table)('%s', (_name, values, key) => {
      expect(validate(values)).toBe(false);
      const messages = (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`).join('; ');
      expect(messages).toMatch(key);
    });
  });
});
