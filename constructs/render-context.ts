// One set of constructs renders two ways: as Helm templates (values become placeholders the chart
// writer turns into `{{ ... }}`) and as plain manifests (values are concrete). Constructs ask the
// context for values, names and conditional fields and never care which mode they are in.

/** A boolean condition over chart values, printable as a Helm expression and evaluable in TS. */
export type Condition =
  | { readonly op: 'truthy'; readonly path: string }
  | { readonly op: 'eq'; readonly path: string; readonly value: string | number | boolean }
  | { readonly op: 'gt'; readonly path: string; readonly value: number }
  | { readonly op: 'not'; readonly cond: Condition }
  | { readonly op: 'and' | 'or'; readonly conds: readonly Condition[] };

export const cond = {
  truthy: (path: string): Condition => ({ op: 'truthy', path }),
  eq: (path: string, value: string | number | boolean): Condition => ({ op: 'eq', path, value }),
  gt: (path: string, value: number): Condition => ({ op: 'gt', path, value }),
  not: (c: Condition): Condition => ({ op: 'not', cond: c }),
  and: (...conds: Condition[]): Condition => ({ op: 'and', conds }),
  or: (...conds: Condition[]): Condition => ({ op: 'or', conds }),
};

/**
 * A deep copy made of plain literals. (Not structuredClone: under Jest that returns objects of
 * another realm, whose `constructor !== Object`, and cdk8s's resolver then mangles any of them that
 * has a `value` key.)
 */
export function plainCopy<T>(value: T): T {
  if (Array.isArray(value)) return value.map(plainCopy) as T;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = plainCopy(v);
    return out as T;
  }
  return value;
}

/**
 * A chart value, Helm expression or conditional field (RenderContext.value, .expression, .when)
 * placed where a type is expected. In plain rendering it is the concrete value; in Helm rendering
 * it is a placeholder the chart writer turns into template text, so a number field may hold a
 * string until Helm renders the template. The one cast between the render context and the typed
 * objects (constructs/kube-object.ts).
 */
export function helmValue<T>(value: unknown): T {
  return value as T;
}

/** Reads a dotted path (`operator.image.tag`) from a values object. */
export function valueAt(values: unknown, path: string): unknown {
  let cur: unknown = values;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

function truthy(v: unknown): boolean {
  // Go template truthiness: empty string, zero, false, nil, empty map/list are false.
  if (v === undefined || v === null || v === false || v === 0 || v === '') return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v as object).length > 0;
  return true;
}

export function evaluateCondition(c: Condition, values: unknown): boolean {
  switch (c.op) {
    case 'truthy': return truthy(valueAt(values, c.path));
    case 'eq': return valueAt(values, c.path) === c.value;
    case 'gt': return Number(valueAt(values, c.path)) > c.value;
    case 'not': return !evaluateCondition(c.cond, values);
    case 'and': return c.conds.every((x) => evaluateCondition(x, values));
    case 'or': return c.conds.some((x) => evaluateCondition(x, values));
  }
}

/** The condition as a Go template pipeline, e.g. `and .Values.a (eq .Values.b "x")`. */
export function conditionExpression(c: Condition): string {
  const ref = (path: string) => `.Values.${path}`;
  switch (c.op) {
    case 'truthy': return ref(c.path);
    case 'eq': return `eq ${ref(c.path)} ${JSON.stringify(c.value)}`;
    case 'gt': return `gt (int ${ref(c.path)}) ${c.value}`;
    case 'not': return `not (${conditionExpression(c.cond)})`;
    case 'and':
    case 'or': return `${c.op} ${c.conds.map((x) => `(${conditionExpression(x)})`).join(' ')}`;
  }
}

/** What a construct may ask for; see HelmRenderContext and PlainRenderContext. */
export interface RenderContext {
  readonly mode: 'helm' | 'plain';
  /** The release's full name (prefix of every object name). */
  readonly fullname: string;
  /** The release namespace. */
  readonly namespace: string;
  /** The Helm release name (`app.kubernetes.io/instance`). */
  readonly releaseName: string;
  /** A value used as a whole YAML scalar of its own type (number, bool, string). */
  value(path: string): unknown;
  /** A value rendered as a string (quoted in Helm; env vars, annotations). */
  text(path: string): string;
  /** A named helper (`_helpers.tpl`) whose TS twin gives the plain value, rendered as a quoted string. */
  helper(name: string, concrete: (values: unknown) => string): string;
  /** A computed expression with its concrete twin, rendered as a whole YAML scalar. */
  expression(helmExpression: string, concrete: (values: unknown) => unknown): unknown;
  /** `{ [key]: <value at path> }`, left out when the value is empty (toYaml block in Helm). */
  block(key: string, path: string): Record<string, unknown>;
  /** The string map at path merged into the surrounding map (labels, annotations). Spread into an object. */
  merge(path: string): Record<string, string>;
  /** The fields, present only when the condition holds. Spread into an object (typed as the fields it may add). */
  when<T extends object>(c: Condition, fields: T): Partial<T>;
  /** The list item, present only when the condition holds. Spread into an array. */
  whenItem<T>(c: Condition, item: T): T[];
  /** Whether the condition holds; undefined in Helm mode, where it is decided at install time. */
  test(c: Condition): boolean | undefined;
}

/** Concrete rendering: a fully defaulted values object and fixed release coordinates. */
export class PlainRenderContext implements RenderContext {
  readonly mode = 'plain';
  constructor(
    private readonly values: unknown,
    readonly releaseName: string,
    readonly namespace: string,
    readonly fullname: string,
  ) {}

  value(path: string): unknown {
    const v = valueAt(this.values, path);
    if (v === undefined) throw new Error(`values: no value at ${path}`);
    return v;
  }
  text(path: string): string { return String(this.value(path)); }
  helper(_name: string, concrete: (values: unknown) => string): string { return concrete(this.values); }
  expression(_e: string, concrete: (values: unknown) => unknown): unknown { return concrete(this.values); }
  block(key: string, path: string): Record<string, unknown> {
    const v = this.value(path);
    return truthy(v) ? { [key]: plainCopy(v) } : {};
  }
  merge(path: string): Record<string, string> {
    return plainCopy(this.value(path) as Record<string, string>);
  }
  when<T extends object>(c: Condition, fields: T): Partial<T> {
    return evaluateCondition(c, this.values) ? fields : {};
  }
  whenItem<T>(c: Condition, item: T): T[] { return evaluateCondition(c, this.values) ? [item] : []; }
  test(c: Condition): boolean { return evaluateCondition(c, this.values); }
}

/** One placeholder the chart writer replaces. */
export type Placeholder =
  | { readonly kind: 'scalar'; readonly expression: string; readonly quote: boolean }
  | { readonly kind: 'block'; readonly expression: string }
  | { readonly kind: 'merge'; readonly expression: string }
  | { readonly kind: 'if'; readonly condition: string; readonly item: boolean };

/** Placeholder tokens are plain YAML scalars that cannot occur in real content. */
export const PLACEHOLDER_PATTERN = /NLSPH(\d+)X/g;
export const placeholderToken = (index: number) => `NLSPH${index}X`;

/** Helm rendering: every value becomes a token; `placeholders` says what each token stands for. */
export class HelmRenderContext implements RenderContext {
  readonly mode = 'helm';
  readonly placeholders: Placeholder[] = [];
  readonly fullname: string;
  readonly namespace: string;
  readonly releaseName: string;

  constructor(private readonly chartName: string) {
    this.fullname = this.token({ kind: 'scalar', expression: `include "${chartName}.fullname" .`, quote: false });
    this.namespace = this.token({ kind: 'scalar', expression: '.Release.Namespace', quote: false });
    this.releaseName = this.token({ kind: 'scalar', expression: '.Release.Name', quote: false });
  }

  private token(p: Placeholder): string {
    this.placeholders.push(p);
    return placeholderToken(this.placeholders.length - 1);
  }

  value(path: string): unknown { return this.token({ kind: 'scalar', expression: `.Values.${path}`, quote: false }); }
  text(path: string): string { return this.token({ kind: 'scalar', expression: `.Values.${path}`, quote: true }); }
  helper(name: string): string {
    return this.token({ kind: 'scalar', expression: `include "${this.chartName}.${name}" .`, quote: true });
  }
  expression(e: string): unknown { return this.token({ kind: 'scalar', expression: e, quote: false }); }
  block(key: string, path: string): Record<string, unknown> {
    return { [this.token({ kind: 'block', expression: `.Values.${path}` })]: key };
  }
  merge(path: string): Record<string, string> {
    return { [this.token({ kind: 'merge', expression: `.Values.${path}` })]: 'merge' };
  }
  when<T extends object>(c: Condition, fields: T): Partial<T> {
    return helmValue({ [this.token({ kind: 'if', condition: conditionExpression(c), item: false })]: fields });
  }
  whenItem<T>(c: Condition, item: T): T[] {
    return [helmValue({ [this.token({ kind: 'if', condition: conditionExpression(c), item: true })]: item })];
  }
  test(): undefined { return undefined; }
}
