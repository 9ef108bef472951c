// values.yaml and the README values table, both walked from the TypeBox schema so every key has
// the schema's description as its comment.
import { TSchema } from '@sinclair/typebox';
import { stringify } from 'yaml';
import { ValuesSchema } from './values-schema';

function isSection(s: TSchema): boolean {
  return s.type === 'object' && !!s.properties && !('default' in s);
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let cur = '';
  for (const word of text.split(/\s+/)) {
    if (cur && cur.length + word.length + 1 > width) {
      lines.push(cur);
      cur = word;
    } else cur = cur ? `${cur} ${word}` : word;
  }
  if (cur) lines.push(cur);
  return lines;
}

function yamlValue(v: unknown, indent: string): string {
  const text = stringify(v, { lineWidth: 0 }).trimEnd();
  const isBlock = (Array.isArray(v) && v.length > 0) || (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length > 0);
  if (!isBlock) return ` ${text}`;
  return `\n${text.split('\n').map((l) => `${indent}  ${l}`).join('\n')}`;
}

function valuesLines(schema: TSchema, indent: string): string[] {
  const out: string[] = [];
  const entries = Object.entries(schema.properties as Record<string, TSchema>);
  entries.forEach(([key, s], i) => {
    if (i > 0 && indent === '') out.push('');
    for (const l of wrap(String(s.description ?? ''), 96 - indent.length)) out.push(`${indent}# ${l}`);
    if (isSection(s)) {
      out.push(`${indent}${key}:`);
      out.push(...valuesLines(s, `${indent}  `));
    } else {
      out.push(`${indent}${key}:${yamlValue(s.default, indent)}`);
    }
  });
  return out;
}

/** values.yaml body (without the generated-file header). */
export function valuesYaml(): string {
  return `${valuesLines(ValuesSchema, '').join('\n')}\n`;
}

function typeOf(s: TSchema): string {
  if (s.anyOf) return (s.anyOf as TSchema[]).map((x) => (x.const !== undefined ? JSON.stringify(x.const) : typeOf(x))).join(' \\| ');
  if (s.type === 'array') return 'list';
  if (s.type === 'object') return s.patternProperties ? 'map' : 'object';
  return String(s.type);
}

function tableRows(schema: TSchema, prefix: string): string[] {
  const rows: string[] = [];
  for (const [key, s] of Object.entries(schema.properties as Record<string, TSchema>)) {
    const path = `${prefix}${key}`;
    if (isSection(s)) {
      rows.push(...tableRows(s, `${path}.`));
      continue;
    }
    const def = JSON.stringify(s.default);
    const desc = String(s.description ?? '').replace(/\|/g, '\\|');
    rows.push(`| \`${path}\` | ${typeOf(s)} | \`${def.replace(/\|/g, '\\|')}\` | ${desc} |`);
  }
  return rows;
}

/** The README's values table in Markdown. */
export function valuesTable(): string {
  return ['| Key | Type | Default | Description |', '|---|---|---|---|', ...tableRows(ValuesSchema, '')].join('\n');
}
