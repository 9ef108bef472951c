// The static cost estimate the API server makes of a CRD's x-kubernetes-validations rules when the
// CRD is created or updated, as Kubernetes 1.32 computes it (k8s.io/apiextensions-apiserver and
// k8s.io/apiserver v0.32.13 on github.com/google/cel-go v0.22.0), so that a rule the oldest
// supported version would refuse is reported offline (issue 35: 1.32 and 1.33 refused CRDs that
// 1.34 accepted, because their estimator sizes an int-or-string as a whole request).
//
// Per expression: cel-go's checker/cost.go walk (literals 0, identifiers and selects 1, has() 0,
// && / || as lhs plus rhs at most, comprehensions as range size × (step + condition), string
// functions proportional to the sizes the schema allows), with the Kubernetes library's estimates
// (library/cost.go) and the schema's sizes (common/schemas.go: maxLength × 4, the longest enum
// value, or what fits in a 3 MiB request). A rule's cost is that times its cardinality (the
// product of maxItems/maxProperties above it, or what fits in a request); the limits are
// 10,000,000 per expression and 100,000,000 for all rules and messageExpressions of a version.
//
// Modelled (Coster.call): && || ?: ! == != < <= > >= + in size string matches contains startsWith
// endsWith [] url isURL getScheme getHostname getHost getPort getEscapedPath getQuery lowerAscii
// upperAscii trim replace hasValue value, plus literals, lists, maps, has() and the comprehension
// macros. Any other function or construct is reported as a problem naming it, so a new one makes
// the estimator learn it instead of guessing.
import type { JsonSchema } from '../api/crd';
import { type ValidationRule, celParse } from './cel-rules';

/** Kubernetes 1.32's StaticEstimatedCostLimit: one rule (× cardinality) or one messageExpression. */
export const RULE_COST_LIMIT = 10_000_000n;
/** Kubernetes 1.32's StaticEstimatedCRDCostLimit: every rule and messageExpression of one version's schema. */
export const CRD_COST_LIMIT = 100_000_000n;
/** The version whose estimator this file ports: the oldest one the chart supports. */
export const COST_KUBERNETES_VERSION = '1.32';

const MAX_UINT64 = (1n << 64n) - 1n;
const MAX_REQUEST_SIZE = 3n * 1024n * 1024n; // celconfig.MaxRequestSizeBytes
const MIN_STRING_SIZE = 2n; // ""
const MIN_BOOL_SIZE = 4n;
const MIN_NUMBER_SIZE = 1n;
const STRING_TRAVERSAL = 0.1; // common.StringTraversalCostFactor
const REGEX_LENGTH = 0.25; // common.RegexStringLengthCostFactor
const LIST_CREATE = 10n;
const MAP_CREATE = 30n;

// ---- saturating uint64 arithmetic, as cel-go's ------------------------------------------------

const add = (x: bigint, y: bigint) => (x + y > MAX_UINT64 ? MAX_UINT64 : x + y);
const mul = (x: bigint, y: bigint) => (x * y > MAX_UINT64 ? MAX_UINT64 : x * y);
function byFactor(x: bigint, factor: number): bigint {
  // float64 arithmetic and a ceiling, like multiplyByCostFactor
  const xFloat = Number(x);
  if (xFloat > 0 && factor > 0 && xFloat > Number(MAX_UINT64) / factor) return MAX_UINT64;
  const ceil = Math.ceil(xFloat * factor);
  return ceil >= 2 ** 64 ? MAX_UINT64 : BigInt(ceil);
}

interface Range {
  readonly min: bigint;
  readonly max: bigint;
}
const range = (min: bigint, max: bigint): Range => ({ min, max });
const ZERO = range(0n, 0n);
const ONE = range(1n, 1n);
const UNKNOWN_SIZE = range(0n, MAX_UINT64);
const rAdd = (a: Range, b: Range) => range(add(a.min, b.min), add(a.max, b.max));
const rMul = (a: Range, b: Range) => range(mul(a.min, b.min), mul(a.max, b.max));
const rFactor = (a: Range, factor: number) => range(byFactor(a.min, factor), byFactor(a.max, factor));
const rUnion = (a: Range, b: Range) => range(a.min < b.min ? a.min : b.min, a.max > b.max ? a.max : b.max);

// ---- the schema's declared types and sizes (apiserver common/schemas.go) -----------------------

type DeclKind = 'object' | 'map' | 'list' | 'string' | 'bytes' | 'int' | 'double' | 'bool' | 'dyn' | 'timestamp' | 'duration';

interface Decl {
  readonly kind: DeclKind;
  /** Max length of a string, items of a list, entries of a map; 0 for scalars. */
  readonly maxElements: bigint;
  /** Smallest JSON serialization, which bounds how many fit in a request. */
  readonly minSize: bigint;
  /** Object fields by their CEL (escaped) name. */
  readonly fields?: ReadonlyMap<string, Decl>;
  readonly elem?: Decl;
  readonly key?: Decl;
}

const simple = (kind: DeclKind, minSize: bigint, maxElements = 0n): Decl => ({ kind, maxElements, minSize });
const STRING_KEY = simple('string', MIN_STRING_SIZE);
const CEL_RESERVED = new Set(['true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while']);

/** A property name as CEL sees it (apiserver cel.Escape), undefined when it cannot be escaped. */
export function celEscape(name: string): string | undefined {
  if (name === '' || /^[0-9]/.test(name)) return undefined;
  if (CEL_RESERVED.has(name)) return `__${name}__`;
  if (/[^a-zA-Z0-9\-./_]/.test(name)) return undefined;
  return name.replace(/__|[-./]/g, (s) => ({ __: '__underscores__', '.': '__dot__', '-': '__dash__', '/': '__slash__' })[s] as string);
}

const int64 = (value: unknown): bigint | undefined => (typeof value === 'number' && Number.isFinite(value) ? BigInt(Math.max(0, Math.trunc(value))) : undefined);

/** apiserver's WithTypeAndObjectMeta: apiVersion, kind and metadata.name/generateName are always there at a resource root. */
function withTypeAndObjectMeta(schema: JsonSchema): JsonSchema {
  const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const metadata = props.metadata as JsonSchema | undefined;
  const metaProps = metadata?.properties as Record<string, JsonSchema> | undefined;
  if (props.kind?.type === 'string' && props.apiVersion?.type === 'string' && metadata?.type === 'object' && metaProps?.name?.type === 'string' && metaProps.generateName?.type === 'string') {
    return schema;
  }
  const str = { type: 'string' };
  return { ...schema, properties: { ...props, kind: str, apiVersion: str, metadata: { type: 'object', properties: { name: str, generateName: str } } } };
}

function maxStringLength(schema: JsonSchema): bigint {
  // estimateMaxStringLengthPerRequest
  switch (schema.format) {
    case 'duration':
      return 32n; // MaxDurationSizeJSON
    case 'date':
      return 12n; // JSONDateSize
    case 'date-time':
      return 32n; // MaxDatetimeSizeJSON
    default:
      return MAX_REQUEST_SIZE - 2n;
  }
}

/** SchemaDeclType: the CEL type of a schema node with its size bounds; undefined where CEL has none. */
export function schemaDecl(input: JsonSchema, resourceRoot: boolean): Decl | undefined {
  if (input['x-kubernetes-int-or-string'] === true) return simple('dyn', 1n, MAX_REQUEST_SIZE - 2n);
  const schema = resourceRoot ? withTypeAndObjectMeta(input) : input;
  const embedded = (s: JsonSchema) => s['x-kubernetes-embedded-resource'] === true;
  switch (schema.type) {
    case 'array': {
      const items = schema.items as JsonSchema | undefined;
      if (!items || typeof items !== 'object') return undefined;
      const elem = schemaDecl(items, embedded(items));
      if (!elem) return undefined;
      const maxItems = int64(schema.maxItems) ?? (MAX_REQUEST_SIZE - 2n) / (elem.minSize + 1n);
      return { kind: 'list', elem, maxElements: maxItems, minSize: 2n };
    }
    case 'object': {
      const additional = schema.additionalProperties;
      if (typeof additional === 'object' && additional !== null) {
        const values = additional as JsonSchema;
        const elem = schemaDecl(values, embedded(values));
        if (!elem) return undefined;
        const maxProperties = int64(schema.maxProperties) ?? (MAX_REQUEST_SIZE - 2n) / (elem.minSize + 6n);
        return { kind: 'map', key: STRING_KEY, elem, maxElements: maxProperties, minSize: 2n };
      }
      const required = new Set((schema.required as string[] | undefined) ?? []);
      const fields = new Map<string, Decl>();
      let minSize = 2n; // {}
      for (const [name, prop] of Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>)) {
        const field = schemaDecl(prop, embedded(prop));
        if (!field) continue;
        const escaped = celEscape(name);
        if (escaped !== undefined) fields.set(escaped, field);
        // required fields without a default are always serialized: "name": value,
        if (required.has(name) && prop.default === undefined) minSize += BigInt(Buffer.byteLength(name)) + field.minSize + 4n;
      }
      return { kind: 'object', fields, maxElements: 0n, minSize };
    }
    case 'string': {
      switch (schema.format) {
        case 'byte':
          return simple('bytes', MIN_STRING_SIZE, int64(schema.maxLength) ?? maxStringLength(schema));
        case 'duration':
          return simple('duration', 3n, maxStringLength(schema));
        case 'date':
          return simple('timestamp', 12n, maxStringLength(schema));
        case 'date-time':
          return simple('timestamp', 21n, maxStringLength(schema));
      }
      const maxLength = int64(schema.maxLength);
      // maxLength counts code points, up to 4 bytes each
      if (maxLength !== undefined) return simple('string', MIN_STRING_SIZE, maxLength * 4n);
      const enumValues = schema.enum as unknown[] | undefined;
      if (enumValues && enumValues.length > 0) {
        let longest = 0n;
        for (const v of enumValues) if (typeof v === 'string' && BigInt(Buffer.byteLength(v)) > longest) longest = BigInt(Buffer.byteLength(v));
        return simple('string', MIN_STRING_SIZE, longest);
      }
      return simple('string', MIN_STRING_SIZE, maxStringLength(schema));
    }
    case 'boolean':
      return simple('bool', MIN_BOOL_SIZE);
    case 'number':
      return simple('double', MIN_NUMBER_SIZE);
    case 'integer':
      return simple('int', MIN_NUMBER_SIZE);
    default:
      return undefined;
  }
}

// ---- one expression (cel-go checker/cost.go with the Kubernetes CostEstimator) ------------------

/** The checked type of an expression, as far as the cost walk needs it. */
interface CelType {
  readonly kind: 'string' | 'bytes' | 'int' | 'uint' | 'double' | 'bool' | 'null' | 'list' | 'map' | 'object' | 'dyn' | 'optional' | 'url' | 'timestamp' | 'duration';
  readonly decl?: Decl;
  readonly elem?: CelType;
  readonly key?: CelType;
}

function declType(decl: Decl): CelType {
  switch (decl.kind) {
    case 'list':
      return { kind: 'list', decl, elem: declType(decl.elem as Decl) };
    case 'map':
      return { kind: 'map', decl, key: { kind: 'string' }, elem: declType(decl.elem as Decl) };
    default:
      return { kind: decl.kind, decl };
  }
}

const isScalar = (t: CelType) => ['bool', 'double', 'duration', 'int', 'timestamp', 'uint'].includes(t.kind);

/** A node of the walk: its cost, type, path from `self` (for schema sizes) and computed size. */
interface Node {
  readonly cost: Range;
  readonly type: CelType;
  readonly path?: readonly string[];
  readonly size?: Range;
}

type Expr = { exprKind: { case: string | undefined; value?: unknown } };
// The shapes of @bufbuild/cel's parsed expression (cel.expr.Expr) the walk reads.
type Call = { function: string; target?: Expr; args: Expr[] };
type Select = { operand: Expr; field: string; testOnly: boolean };
type Literal = { constantKind: { case: string; value: unknown } };
type Comprehension = { iterVar: string; iterVar2?: string; iterRange: Expr; accuVar: string; accuInit: Expr; loopCondition: Expr; loopStep: Expr; result: Expr };
type CreateStruct = { messageName: string; entries: { keyKind: { value: Expr }; value: Expr }[] };

class Unmodelled extends Error {}

/** Estimates one expression against the `self` type `root`. */
class Coster {
  private readonly ranges = new Map<string, Node[]>(); // iteration variables in scope
  private readonly accumulators = new Map<string, CelType>(); // a comprehension's result, typed by its initial value

  constructor(
    private readonly root: Decl,
    private readonly oldSelfOptional: boolean,
  ) {}

  /** The checker's size of a node: computed, from the schema via its path, 1 for scalars, else unbounded. */
  private size(node: Node): Range {
    return node.size ?? this.schemaSize(node) ?? (isScalar(node.type) ? ONE : UNKNOWN_SIZE);
  }

  /** The Kubernetes library's size of a node: like size() without the scalar case. */
  private librarySize(node: Node): Range {
    return node.size ?? this.schemaSize(node) ?? UNKNOWN_SIZE;
  }

  private schemaSize(node: Node): Range | undefined {
    const path = node.path;
    if (!path || path.length === 0) return undefined;
    let current: Decl | undefined = this.root;
    // the first element is the variable (self, oldSelf, or a range's path), always from the root
    for (const step of path.slice(1)) {
      if (step === '@items' || step === '@values') current = current.elem;
      else if (step === '@keys') current = current.key;
      else current = current.fields?.get(step);
      if (!current) return undefined;
    }
    return range(0n, current.maxElements);
  }

  cost(expr: Expr): Node {
    const { case: kind, value } = expr.exprKind;
    switch (kind) {
      case 'constExpr':
        return this.literal(value as Literal);
      case 'identExpr':
        return this.ident((value as { name: string }).name);
      case 'selectExpr':
        return this.select(value as Select);
      case 'callExpr':
        return this.call(value as Call);
      case 'listExpr': {
        let sum = ZERO;
        const elems = (value as { elements: Expr[] }).elements.map((e) => this.cost(e));
        for (const e of elems) sum = rAdd(sum, e.cost);
        const n = BigInt(elems.length);
        const elem = elems.length > 0 && elems.every((e) => e.type.kind === elems[0]?.type.kind) ? (elems[0] as Node).type : { kind: 'dyn' as const };
        return { cost: rAdd(sum, range(LIST_CREATE, LIST_CREATE)), type: { kind: 'list', elem }, size: range(n, n) };
      }
      case 'structExpr': {
        const create = value as CreateStruct;
        if (create.messageName) throw new Unmodelled(`message construction ${create.messageName}{}`);
        let sum = ZERO;
        for (const entry of create.entries) sum = rAdd(rAdd(sum, this.cost(entry.keyKind.value).cost), this.cost(entry.value).cost);
        const n = BigInt(create.entries.length);
        return { cost: rAdd(sum, range(MAP_CREATE, MAP_CREATE)), type: { kind: 'map', key: { kind: 'dyn' }, elem: { kind: 'dyn' } }, size: range(n, n) };
      }
      case 'comprehensionExpr':
        return this.comprehension(value as Comprehension);
      default:
        throw new Unmodelled(`expression kind ${kind}`);
    }
  }

  private literal(value: Literal): Node {
    const { case: kind, value: v } = value.constantKind;
    switch (kind) {
      case 'stringValue': {
        const n = BigInt([...(v as string)].length);
        return { cost: ZERO, type: { kind: 'string' }, size: range(n, n) };
      }
      case 'bytesValue': {
        const n = BigInt((v as Uint8Array).length);
        return { cost: ZERO, type: { kind: 'bytes' }, size: range(n, n) };
      }
      case 'boolValue':
        return { cost: ZERO, type: { kind: 'bool' }, size: ONE };
      case 'int64Value':
        return { cost: ZERO, type: { kind: 'int' }, size: ONE };
      case 'uint64Value':
        return { cost: ZERO, type: { kind: 'uint' }, size: ONE };
      case 'doubleValue':
        return { cost: ZERO, type: { kind: 'double' }, size: ONE };
      case 'nullValue':
        return { cost: ZERO, type: { kind: 'null' }, size: ONE };
      default:
        throw new Unmodelled(`literal ${kind}`);
    }
  }

  private ident(name: string): Node {
    const cost = ONE;
    const scope = this.ranges.get(name);
    const iterRange = scope?.[scope.length - 1];
    if (iterRange) {
      const t = iterRange.type;
      // a range variable's path is its range's path plus @items (list) or @keys (map)
      if (t.kind === 'list') return { cost, type: t.elem ?? { kind: 'dyn' }, path: [...(iterRange.path ?? []), '@items'] };
      if (t.kind === 'map') return { cost, type: t.key ?? { kind: 'dyn' }, path: [...(iterRange.path ?? []), '@keys'] };
      return { cost, type: { kind: 'dyn' }, path: undefined };
    }
    const accumulator = this.accumulators.get(name);
    if (accumulator) return { cost, type: accumulator }; // an accumulator has no path
    if (name === 'self') return { cost, type: declType(this.root), path: [name] };
    if (name === 'oldSelf') {
      const t = declType(this.root);
      return { cost, type: this.oldSelfOptional ? { kind: 'optional', elem: t } : t, path: [name] };
    }
    throw new Unmodelled(`identifier ${name}`);
  }

  private select(value: Select): Node {
    const operand = this.cost(value.operand);
    // has(): the presence test itself is free (PresenceTestHasCost(false) in Kubernetes)
    if (value.testOnly) return { cost: operand.cost, type: { kind: 'bool' } };
    const t = operand.type;
    let type: CelType;
    if (t.kind === 'object') {
      const field = t.decl?.fields?.get(value.field);
      if (!field) throw new Unmodelled(`field ${value.field} (not in the schema)`);
      type = declType(field);
    } else if (t.kind === 'map') type = t.elem ?? { kind: 'dyn' };
    else if (t.kind === 'dyn') type = { kind: 'dyn' };
    else throw new Unmodelled(`field selection .${value.field} on ${t.kind}`);
    const cost = t.kind === 'object' || t.kind === 'map' ? rAdd(operand.cost, ONE) : operand.cost;
    return { cost, type, path: [...(operand.path ?? []), value.field] };
  }

  private comprehension(value: Comprehension): Node {
    if (value.iterVar2) throw new Unmodelled('two-variable comprehension');
    const iterRange = this.cost(value.iterRange);
    let sum = iterRange.cost;
    const init = this.cost(value.accuInit);
    sum = rAdd(sum, init.cost);
    const scope = this.ranges.get(value.iterVar) ?? [];
    scope.push(iterRange);
    this.ranges.set(value.iterVar, scope);
    this.accumulators.set(value.accuVar, init.type);
    const loop = this.cost(value.loopCondition);
    const step = this.cost(value.loopStep);
    scope.pop();
    const result = this.cost(value.result);
    sum = rAdd(sum, result.cost);
    const count = this.size(iterRange);
    sum = rAdd(sum, rMul(count, rAdd(step.cost, loop.cost)));
    return { cost: sum, type: result.type, size: count };
  }

  private call(value: Call): Node {
    const fn = value.function;
    const args = value.args.map((a) => this.cost(a));
    let argSum = ZERO;
    for (const a of args) argSum = rAdd(argSum, a.cost);
    const target = value.target ? this.cost(value.target) : undefined;
    const targetCost = target?.cost ?? ZERO;
    const done = (fnCost: Range, type: CelType, size?: Range, path?: readonly string[]): Node => ({ cost: rAdd(targetCost, fnCost), type, size, path });
    const plain = rAdd(ONE, argSum); // cel-go's default: 1 plus the arguments
    const [a0, a1, a2] = args;
    const bool: CelType = { kind: 'bool' };
    const str: CelType = { kind: 'string' };
    const isStr = (n: Node | undefined) => n?.type.kind === 'string';
    const need = (ok: boolean, what: string) => {
      if (!ok) throw new Unmodelled(what);
    };
    switch (fn) {
      case '_&&_':
      case '_||_': {
        const lhs = (a0 as Node).cost;
        const rhs = (a1 as Node).cost;
        return done(range(lhs.min, add(lhs.max, rhs.max)), bool);
      }
      case '_?_:_': {
        const size = rUnion(this.size(a1 as Node), this.size(a2 as Node));
        const type = a1?.type.kind === a2?.type.kind ? (a1 as Node).type : { kind: 'dyn' as const };
        return done(rAdd((a0 as Node).cost, rUnion((a1 as Node).cost, (a2 as Node).cost)), type, size);
      }
      case '!_':
      case '@not_strictly_false':
        return done(plain, bool);
      case '_==_':
      case '_!=_':
        need(a0?.type.kind !== 'url' && a1?.type.kind !== 'url', `${fn} on URLs`);
        return done(rAdd(this.equality(a0 as Node, a1 as Node), argSum), bool);
      case '_<_':
      case '_<=_':
      case '_>_':
      case '_>=_': {
        const kinds = new Set([a0?.type.kind, a1?.type.kind]);
        if ([...kinds].every((k) => k === 'int' || k === 'uint' || k === 'double')) return done(plain, bool);
        need(kinds.size === 1 && (kinds.has('string') || kinds.has('bytes')), `${fn} on ${[...kinds].join(' and ')}`);
        return done(rAdd(this.equality(a0 as Node, a1 as Node), argSum), bool);
      }
      case '@in': {
        const container = (a1 as Node).type.kind;
        if (container === 'list') return done(rAdd(rFactor(this.size(a1 as Node), 1), argSum), bool);
        need(container === 'map', `in on ${container}`);
        return done(plain, bool);
      }
      case 'size':
        return done(plain, { kind: 'int' });
      case 'matches': {
        if (!target) return done(plain, bool); // the global matches() has no estimate of its own
        need(isStr(target) || target.type.kind === 'dyn', `matches on ${target.type.kind}`);
        const strCost = rFactor(rAdd(this.size(target), ONE), STRING_TRAVERSAL);
        const regexCost = rFactor(this.size(a0 as Node), REGEX_LENGTH);
        return done(rAdd(rMul(strCost, regexCost), argSum), bool);
      }
      case 'contains': {
        need(target !== undefined && (isStr(target) || target.type.kind === 'dyn'), 'contains on a non-string');
        const strCost = rFactor(this.size(target as Node), STRING_TRAVERSAL);
        const subCost = rFactor(this.size(a0 as Node), STRING_TRAVERSAL);
        return done(rAdd(rMul(strCost, subCost), argSum), bool);
      }
      case 'startsWith':
      case 'endsWith':
        need(target !== undefined && args.length === 1, `${fn} without a receiver`);
        return done(rAdd(rFactor(this.size(a0 as Node), STRING_TRAVERSAL), argSum), bool);
      case '_+_': {
        const kinds = new Set([a0?.type.kind, a1?.type.kind]);
        if (kinds.size === 1 && (kinds.has('int') || kinds.has('uint') || kinds.has('double'))) return done(plain, (a0 as Node).type);
        need(kinds.size === 1 && (kinds.has('string') || kinds.has('bytes') || kinds.has('list')), `+ on ${[...kinds].join(' and ')}`);
        const size = rAdd(this.size(a0 as Node), this.size(a1 as Node));
        if (kinds.has('list')) return done(rAdd(ONE, argSum), (a0 as Node).type, size);
        return done(rAdd(rFactor(size, STRING_TRAVERSAL), argSum), (a0 as Node).type, size);
      }
      case 'string': {
        need(!target && args.length === 1, 'string() with a receiver');
        const kind = (a0 as Node).type.kind;
        if (kind === 'dyn' || kind === 'bytes') {
          // a dyn argument matches every overload of string(), bytes_to_string among them
          const sz = this.size(a0 as Node);
          const bytesCost = rAdd(rFactor(sz, STRING_TRAVERSAL), argSum);
          return done(kind === 'dyn' ? rUnion(bytesCost, plain) : bytesCost, str, range(sz.min / 4n, sz.max));
        }
        need(['string', 'int', 'uint', 'double', 'bool', 'timestamp', 'duration'].includes(kind), `string() of ${kind}`);
        return done(plain, str);
      }
      case 'url': {
        need(!target && args.length === 1, 'url() with a receiver');
        const sz = this.librarySize(a0 as Node);
        return done(rAdd(rFactor(sz, STRING_TRAVERSAL), argSum), { kind: 'url' }, sz);
      }
      case 'isURL':
        need(!target && args.length === 1, 'isURL() with a receiver');
        return done(plain, bool);
      case 'getScheme':
      case 'getHostname':
      case 'getHost':
      case 'getPort':
      case 'getEscapedPath':
      case 'getQuery':
        need(target?.type.kind === 'url', `${fn} on ${target?.type.kind ?? 'nothing'}`);
        return done(rAdd(ONE, argSum), str);
      case 'lowerAscii':
      case 'upperAscii':
      case 'trim': {
        need(target !== undefined && isStr(target), `${fn} on a non-string`);
        const sz = this.librarySize(target as Node);
        return done(rAdd(rFactor(sz, STRING_TRAVERSAL), argSum), str, sz);
      }
      case 'replace': {
        need(target !== undefined && isStr(target) && args.length >= 2, 'replace on a non-string');
        return done(rAdd(this.replaceCost(target as Node), argSum), str, this.replaceSize(target as Node, a0 as Node, a1 as Node));
      }
      case 'hasValue':
        need(target?.type.kind === 'optional', 'hasValue on a non-optional');
        return done(plain, bool);
      case 'value':
        need(target?.type.kind === 'optional', 'value on a non-optional');
        // a call result has no path: a field selected from it is sized from the root (as in cel-go)
        return done(plain, target?.type.elem ?? { kind: 'dyn' });
      case '_[_]': {
        const t = (a0 as Node).type;
        need(t.kind === 'list' || t.kind === 'map', `index on ${t.kind}`);
        return done(plain, t.elem ?? { kind: 'dyn' }, undefined, [...((a0 as Node).path ?? []), t.kind === 'list' ? '@items' : '@values']);
      }
      default:
        throw new Unmodelled(`function ${fn}`);
    }
  }

  /** replace() traverses its receiver twice. */
  private replaceCost(target: Node): Range {
    return rFactor(this.librarySize(target), 2 * STRING_TRAVERSAL);
  }

  /** The size of replace()'s result: every occurrence replaced, within what the receiver allows. */
  private replaceSize(target: Node, from: Node, to: Node): Range {
    const sz = this.librarySize(target);
    const fromSz = this.librarySize(from);
    const toSz = this.librarySize(to);
    let countMax: bigint;
    let retainedMax = 0n;
    if (fromSz.min === 0n) {
      // an empty string matches between every character
      countMax = sz.max < MAX_UINT64 ? sz.max + 1n : sz.max;
      retainedMax = sz.max;
    } else if (toSz.max <= fromSz.min) {
      countMax = 0n; // the result cannot grow
      retainedMax = sz.max;
    } else {
      countMax = BigInt(Math.ceil(Number(sz.max) / Number(fromSz.min)));
    }
    let countMin: bigint;
    let retainedMin = 0n;
    if (fromSz.max === 0n) {
      countMin = sz.min < MAX_UINT64 ? sz.min + 1n : sz.min;
      retainedMin = sz.min;
    } else if (fromSz.max <= toSz.min) {
      countMin = 0n;
      retainedMin = sz.min;
    } else {
      countMin = BigInt(Math.ceil(Number(sz.min) / Number(fromSz.max)));
    }
    return rAdd(rMul(range(countMin, countMax), toSz), range(retainedMin, retainedMax));
  }

  /** ==, != and string/bytes ordering: the shorter side's length at most, × 0.1. */
  private equality(lhs: Node, rhs: Node): Range {
    const l = this.size(lhs);
    const r = this.size(rhs);
    const smallestMax = r.max < l.max ? r.max : l.max;
    return rFactor(range(smallestMax > 0n ? 1n : 0n, smallestMax), STRING_TRAVERSAL);
  }
}

/** The estimated maximum cost of one expression with `self` of type `self`; throws Unmodelled. */
function expressionCost(expression: string, self: Decl, oldSelfOptional: boolean): bigint {
  // Parsing dominates the estimate: each expression is parsed once per process, shared with the rule evaluation.
  const parsed = celParse(expression) as unknown as { expr: Expr };
  return new Coster(self, oldSelfOptional).cost(parsed.expr).cost.max;
}

// ---- the CRD walk (apiextensions validation.go and cel_validation.go) ---------------------------

/** One expression's estimated cost, as Kubernetes 1.32 charges it to the budgets. */
export interface ExpressionCost {
  /** The CRD's field path of the expression, as the API server names it. */
  readonly path: string;
  readonly expression: 'rule' | 'messageExpression';
  /** The expression's own estimate (MaxCost). */
  readonly maxCost: bigint;
  /** How often it can run: 1 for a messageExpression, the rule's cardinality otherwise. */
  readonly cardinality: bigint;
  /** maxCost × cardinality, what the budgets count. */
  readonly cost: bigint;
}

export interface CelCostReport {
  readonly crd: string;
  readonly expressions: readonly ExpressionCost[];
  /** Sum over each version's schema. */
  readonly totals: readonly { readonly version: string; readonly path: string; readonly total: bigint }[];
  /** An expression the estimator cannot price: `reason` is "does not model <function or construct>" or "cannot parse it (...)". */
  readonly unmodelled: readonly { readonly path: string; readonly reason: string }[];
}

interface CrdLike {
  readonly metadata: { readonly name: string };
  readonly spec: { readonly versions: readonly { readonly name: string; readonly schema?: { readonly openAPIV3Schema?: unknown } }[] };
}

/** The factor as the API server prints it ("5.5x", "1.164347x", "more than 100x"). */
export function costFactor(cost: bigint, limit: bigint): string {
  const factor = Number(cost) / Number(limit);
  if (factor > 100) return 'more than 100x';
  if (factor < 1.5) return `${factor.toFixed(6)}x`;
  return `${factor.toFixed(1)}x`;
}

/** Every rule's and messageExpression's estimated cost in `crd`, per served version's schema. */
export function celCostReport(crd: CrdLike): CelCostReport {
  const expressions: ExpressionCost[] = [];
  const totals: { version: string; path: string; total: bigint }[] = [];
  const unmodelled: { path: string; reason: string }[] = [];
  crd.spec.versions.forEach((version, index) => {
    const schema = version.schema?.openAPIV3Schema as JsonSchema | undefined;
    if (!schema) return;
    const at = `spec.versions[${index}].schema.openAPIV3Schema`;
    let total = 0n;
    const walk = (node: JsonSchema, path: string, decl: Decl | undefined, cardinality: bigint | undefined) => {
      const rules = (node['x-kubernetes-validations'] as ValidationRule[] | undefined) ?? [];
      if (rules.length > 0 && !decl) unmodelled.push({ path: `${path}.x-kubernetes-validations`, reason: 'does not model rules on a node without a CEL type' });
      if (rules.length > 0 && decl) {
        // without maxItems/maxProperties above, as many as fit in a request
        const card = cardinality ?? MAX_REQUEST_SIZE / (decl.minSize + 1n);
        rules.forEach((rule, i) => {
          const rulePath = `${path}.x-kubernetes-validations[${i}]`;
          const price = (expression: 'rule' | 'messageExpression', text: string, times: bigint) => {
            if (text.trim() === '') return;
            try {
              const maxCost = expressionCost(text, decl, rule.optionalOldSelf === true);
              const cost = maxCost === 0n ? 0n : mul(maxCost, times);
              expressions.push({ path: `${rulePath}.${expression}`, expression, maxCost, cardinality: times, cost });
              total = add(total, cost);
            } catch (error) {
              const reason = error instanceof Unmodelled ? `does not model ${error.message}` : `cannot parse it (${(error as Error).message.split('\n')[0]})`;
              unmodelled.push({ path: `${rulePath}.${expression}`, reason });
            }
          };
          price('rule', rule.rule, card);
          // a messageExpression is charged once, without the rule's cardinality
          if (rule.messageExpression) price('messageExpression', rule.messageExpression, 1n);
        });
      }
      // extractMaxElements: a map or list multiplies its children's cardinality by its bound, or unbounds it
      let factor: bigint | undefined = 1n;
      if (node.type === 'object' && node.additionalProperties !== undefined) factor = int64(node.maxProperties);
      else if (node.type === 'array') factor = int64(node.maxItems);
      const child = cardinality !== undefined && factor !== undefined ? mul(cardinality, factor) : undefined;
      const props = node.properties as Record<string, JsonSchema> | undefined;
      for (const [name, prop] of Object.entries(props ?? {})) {
        const escaped = celEscape(name);
        const fieldDecl = decl?.kind === 'object' && escaped !== undefined ? decl.fields?.get(escaped) : undefined;
        walk(prop, `${path}.properties[${name}]`, fieldDecl ?? schemaDecl(prop, prop['x-kubernetes-embedded-resource'] === true), child);
      }
      const additional = node.additionalProperties;
      if (typeof additional === 'object' && additional !== null) {
        const values = additional as JsonSchema;
        walk(values, `${path}.additionalProperties`, decl?.kind === 'map' ? decl.elem : schemaDecl(values, values['x-kubernetes-embedded-resource'] === true), child);
      }
      const items = node.items as JsonSchema | undefined;
      if (typeof items === 'object' && items !== null && !Array.isArray(items)) {
        walk(items, `${path}.items`, decl?.kind === 'list' ? decl.elem : schemaDecl(items, items['x-kubernetes-embedded-resource'] === true), child);
      }
    };
    walk(schema, at, schemaDecl(schema, true), 1n);
    totals.push({ version: version.name, path: at, total });
  });
  return { crd: crd.metadata.name, expressions, totals, unmodelled };
}

/**
 * What Kubernetes 1.32 would refuse in `crd` for cost, as problem lines (empty when it accepts
 * it): a rule (× cardinality) or messageExpression over 10,000,000, a version's total over
 * 100,000,000, or an expression the estimator does not model.
 */
export function celCostProblems(crd: CrdLike): string[] {
  const report = celCostReport(crd);
  const problems: string[] = [];
  const prefix = `CustomResourceDefinition ${report.crd}`;
  for (const e of report.expressions) {
    if (e.cost <= RULE_COST_LIMIT) continue;
    const what = e.expression === 'rule' ? 'estimated rule cost' : 'estimated messageExpression cost';
    const times = e.cardinality > 1n ? ` (${e.maxCost} × cardinality ${e.cardinality})` : '';
    problems.push(`${prefix}: ${e.path}: ${what} ${e.cost}${times} exceeds the Kubernetes ${COST_KUBERNETES_VERSION} budget of ${RULE_COST_LIMIT} by factor of ${costFactor(e.cost, RULE_COST_LIMIT)}; Kubernetes ${COST_KUBERNETES_VERSION} refuses the CRD (add maxLength, maxItems or maxProperties, simplify the rule, or move the check to the webhook)`);
  }
  for (const t of report.totals) {
    if (t.total <= CRD_COST_LIMIT) continue;
    problems.push(`${prefix}: ${t.path}: estimated rule cost total ${t.total} exceeds the Kubernetes ${COST_KUBERNETES_VERSION} budget of ${CRD_COST_LIMIT} for an entire schema by factor of ${costFactor(t.total, CRD_COST_LIMIT)}; Kubernetes ${COST_KUBERNETES_VERSION} refuses the CRD`);
  }
  for (const u of report.unmodelled) {
    problems.push(`${prefix}: ${u.path}: the offline CEL cost estimator ${u.reason}, so it cannot tell whether Kubernetes ${COST_KUBERNETES_VERSION} accepts the rule's cost; teach src/admission/cel-cost.ts its estimate`);
  }
  return problems;
}
