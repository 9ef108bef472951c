import { parse } from 'yaml';
import { conditionExpression, cond, HelmRenderContext } from '../../../constructs';
import { templateText } from '../../../src/chart/template-writer';

function render(build: (ctx: HelmRenderContext) => unknown, condition?: string): string {
  const ctx = new HelmRenderContext('c');
  const obj = build(ctx);
  return templateText([obj], ctx.placeholders, condition);
}

describe('templateText', () => {
  test('a whole-scalar value is written raw, a text value quoted', () => {
    const out = render((ctx) => ({ spec: { replicas: ctx.value('a.n'), mode: ctx.text('a.mode') } }));
    expect(out).toContain('replicas: {{ .Values.a.n }}\n');
    expect(out).toContain('mode: {{ .Values.a.mode | quote }}\n');
  });

  test('names built from the full name stay inline; quoted parts switch to print | quote', () => {
    const out = render((ctx) => ({ name: `${ctx.fullname}-webhook`, both: `${ctx.fullname}:${ctx.text('x')}` }));
    expect(out).toContain('name: {{ include "c.fullname" . }}-webhook\n');
    expect(out).toContain('both: {{ print (include "c.fullname" .) ":" (.Values.x) | quote }}\n');
  });

  test('a conditional map entry becomes if/end around its dedented children', () => {
    const out = render((ctx) => ({ metadata: { ...ctx.when(cond.eq('m', 'x'), { annotations: { a: 'b' } }), name: 'n' } }));
    expect(out).toContain('metadata:\n  {{- if eq .Values.m "x" }}\n  annotations:\n    a: b\n  {{- end }}\n  name: n\n');
  });

  test('a conditional list item keeps its dash', () => {
    const out = render((ctx) => ({ items: [{ name: 'a' }, ...ctx.whenItem(cond.truthy('b'), { name: 'b', port: 1 })] }));
    expect(out).toContain('items:\n  - name: a\n  {{- if .Values.b }}\n  - name: b\n    port: 1\n  {{- end }}\n');
  });

  test('a block is a with/toYaml pair that drops the key when the value is empty', () => {
    const out = render((ctx) => ({ spec: { ...ctx.block('tolerations', 'op.tolerations'), x: 1 } }));
    expect(out).toContain('spec:\n  {{- with .Values.op.tolerations }}\n  tolerations:\n    {{- toYaml . | nindent 4 }}\n  {{- end }}\n  x: 1\n');
  });

  test('a merge writes the map into the surrounding map', () => {
    const out = render((ctx) => ({ labels: { ...ctx.merge('commonLabels'), a: 'b' } }));
    expect(out).toContain('labels:\n  {{- with .Values.commonLabels }}\n  {{- toYaml . | nindent 2 }}\n  {{- end }}\n  a: b\n');
  });

  test('a token that is the first key of a list item starts the item on its own line', () => {
    const out = render((ctx) => ({ containers: [{ ...ctx.block('resources', 'r'), name: 'c' }] }));
    expect(out).toContain('containers:\n  -\n    {{- with .Values.r }}\n    resources:\n      {{- toYaml . | nindent 6 }}\n    {{- end }}\n    name: c\n');
  });

  test('a whole-file condition wraps every document', () => {
    const out = render(() => ({ kind: 'X' }), conditionExpression(cond.gt('r', 1)));
    expect(out).toBe('{{- if gt (int .Values.r) 1 }}\n---\nkind: X\n{{- end }}\n');
  });

  test('output without tokens is plain YAML that parses back to the object', () => {
    const obj = { a: { b: [1, 'two', { c: true }] }, s: 'x: y' };
    expect(parse(templateText([obj], []))).toEqual(obj);
  });

  test('a token used where it cannot be written is an error naming the line', () => {
    const ctx = new HelmRenderContext('c');
    const obj = { spec: { x: Object.keys(ctx.block('k', 'p'))[0] } };
    expect(() => templateText([obj], ctx.placeholders)).toThrow(/block placeholder used as a scalar/);
  });
});
