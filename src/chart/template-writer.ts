// Turns objects synthesized with a HelmRenderContext into Helm template text. The objects carry
// placeholder tokens (plain YAML scalars); serialising them with the `yaml` library and replacing
// the tokens line by line keeps the writer small: scalars become `{{ expr }}`, `if` keys become
// `{{- if }}`/`{{- end }}` around their (dedented) children, and block keys become `toYaml` blocks.
import { stringify } from 'yaml';
import { PLACEHOLDER_PATTERN, Placeholder } from '../../constructs/render-context';

const TOKEN_KEY_LINE = /^(\s*)(- )?NLSPH(\d+)X:(?: (.*))?$/;
const SAFE_LITERAL = /^[A-Za-z0-9._/-]*$/;

/** Serialises one object as YAML without line folding (tokens must stay on their line). */
export function toYamlDocument(obj: unknown): string {
  return stringify(obj, { lineWidth: 0, minContentWidth: 0, aliasDuplicateObjects: false });
}

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

function unquote(value: string): string {
  if (value.startsWith('"') && value.endsWith('"')) return JSON.parse(value) as string;
  if (value.startsWith("'") && value.endsWith("'")) return value.slice(1, -1).replace(/''/g, "'");
  return value;
}

/** Rewrites one scalar that holds tokens as template text. */
function scalarTemplate(raw: string, placeholders: readonly Placeholder[]): string {
  const value = unquote(raw);
  const parts: Array<{ literal: string } | { p: Extract<Placeholder, { kind: 'scalar' }> }> = [];
  let last = 0;
  for (const m of value.matchAll(PLACEHOLDER_PATTERN)) {
    if (m.index! > last) parts.push({ literal: value.slice(last, m.index) });
    const p = placeholders[Number(m[1])];
    if (p.kind !== 'scalar') throw new Error(`template writer: ${p.kind} placeholder used as a scalar in "${value}"`);
    parts.push({ p });
    last = m.index! + m[0].length;
  }
  if (last < value.length) parts.push({ literal: value.slice(last) });
  if (parts.length === 1 && 'p' in parts[0]) {
    const p = parts[0].p;
    return `{{ ${p.expression}${p.quote ? ' | quote' : ''} }}`;
  }
  const inline = parts.every((x) => ('p' in x ? !x.p.quote : SAFE_LITERAL.test(x.literal)));
  if (inline) return parts.map((x) => ('p' in x ? `{{ ${x.p.expression} }}` : x.literal)).join('');
  const operands = parts.map((x) => ('p' in x ? `(${x.p.expression})` : JSON.stringify(x.literal)));
  return `{{ print ${operands.join(' ')} | quote }}`;
}

/** Replaces scalar tokens on a line that is not a token key. */
function rewriteScalars(line: string, placeholders: readonly Placeholder[]): string {
  if (!line.includes('NLSPH')) return line;
  const m = /^(\s*(?:- )*)((?:"[^"]*"|[^\s"'#-][^:]*|-[^\s:][^:]*): )?(.+)$/.exec(line);
  if (!m) throw new Error(`template writer: cannot parse line "${line}"`);
  const [, prefix, key = '', value] = m;
  if (key.includes('NLSPH')) throw new Error(`template writer: token in a map key on line "${line}"`);
  return `${prefix}${key}${scalarTemplate(value, placeholders)}`;
}

/** Rewrites a list of lines (recursively for `if` children). */
export function rewriteLines(input: readonly string[], placeholders: readonly Placeholder[]): string[] {
  const lines = [...input];
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const m = TOKEN_KEY_LINE.exec(line);
    const p = m ? placeholders[Number(m[3])] : undefined;
    if (!m || !p || p.kind === 'scalar') {
      out.push(rewriteScalars(line, placeholders));
      continue;
    }
    if (m[2] && !(p.kind === 'if' && p.item)) {
      // A token that is the first key of a list item's map: start the item on its own line
      // (`-` alone is valid YAML) and treat the token as an ordinary key of that map.
      out.push(`${m[1]}-`);
      lines[i] = `${m[1]}  ${line.slice(m[1].length + 2)}`;
      i--;
      continue;
    }
    const indent = m[1];
    const dash = m[2] ?? '';
    const keyCol = indent.length + dash.length;
    const inlineValue = m[4];
    if (p.kind === 'merge') {
      if (dash) throw new Error(`template writer: merge placeholder in a list on line "${line}"`);
      out.push(`${indent}{{- with ${p.expression} }}`);
      out.push(`${indent}{{- toYaml . | nindent ${keyCol} }}`);
      out.push(`${indent}{{- end }}`);
      continue;
    }
    if (p.kind === 'block') {
      if (dash || !inlineValue) throw new Error(`template writer: malformed block line "${line}"`);
      out.push(`${indent}{{- with ${p.expression} }}`);
      out.push(`${indent}${inlineValue}:`);
      out.push(`${indent}  {{- toYaml . | nindent ${keyCol + 2} }}`);
      out.push(`${indent}{{- end }}`);
      continue;
    }
    // An `if` key: its children are the following lines indented deeper than the key.
    const children: string[] = [];
    if (inlineValue !== undefined) {
      children.push(`${indent}${dash}${inlineValue}`);
    } else {
      let j = i + 1;
      while (j < lines.length && (lines[j].trim() === '' || indentOf(lines[j]) > keyCol)) j++;
      const block = lines.slice(i + 1, j).map((l) => l.slice(2));
      if (dash && block.length > 0) block[0] = `${indent}- ${block[0].slice(indent.length + 2)}`;
      children.push(...block);
      i = j - 1;
    }
    out.push(`${indent}{{- if ${p.condition} }}`);
    out.push(...rewriteLines(children, placeholders));
    out.push(`${indent}{{- end }}`);
  }
  return out;
}

/** A template file: its objects, optionally wrapped in a whole-file condition. */
export function templateText(objects: readonly unknown[], placeholders: readonly Placeholder[], condition?: string): string {
  const docs = objects.map((o) => rewriteLines(toYamlDocument(o).trimEnd().split('\n'), placeholders).join('\n'));
  const body = docs.map((d) => `---\n${d}\n`).join('');
  return condition ? `{{- if ${condition} }}\n${body}{{- end }}\n` : body;
}
