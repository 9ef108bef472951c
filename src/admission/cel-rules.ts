// The CRD's own x-kubernetes-validations rules, evaluated the way the API server does: each rule
// on every node whose value is present, `self` typed by the schema, transition rules (those that
// read `oldSelf`) only when the old object has the value (or always, with `optionalOldSelf`),
// `messageExpression` before `message`, `fieldPath` and `reason` in the cause. Each rule is
// parsed and planned once and kept.
import { type CelInput, type CelResult, celEnv, CelScalar, isCelError, parse, plan } from '@bufbuild/cel';
import type { JsonSchema } from '../api/crd';
import { jsonEqual } from '../webhook/json-patch';
import { celOptional, kubernetesCelFunctions } from './cel-library';
import { type PathStep, formatPath, parseRelativeFieldPath } from './field-path';
import { re2 } from './regex';
import type { Problem } from './result';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** One entry of `x-kubernetes-validations`. */
export interface ValidationRule {
  readonly rule: string;
  readonly message?: string;
  readonly messageExpression?: string;
  readonly fieldPath?: string;
  readonly reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
  readonly optionalOldSelf?: boolean;
}

const environment = celEnv({
  funcs: [...kubernetesCelFunctions],
  variables: { self: CelScalar.DYN, oldSelf: CelScalar.DYN },
  re2: { compile: re2 },
});

type Program = (bindings: { self: CelInput; oldSelf: CelInput }) => CelResult;
const programs = new Map<string, Program>();

const parsed = new Map<string, ReturnType<typeof parse>>();

/** The parsed form of a CEL expression, parsed once per process (the cost estimate shares it). Throws on a syntax error. */
export function celParse(expression: string): ReturnType<typeof parse> {
  let ast = parsed.get(expression);
  if (!ast) {
    ast = parse(expression);
    parsed.set(expression, ast);
  }
  return ast;
}

/** The planned program of a CEL expression, compiled on first use. Throws on a syntax error. */
export function celProgram(expression: string): Program {
  let program = programs.get(expression);
  if (!program) {
    program = plan(environment, celParse(expression)) as unknown as Program;
    programs.set(expression, program);
  }
  return program;
}

const isObject = (value: unknown): value is { [key: string]: Json } => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A JSON value as the API server hands it to CEL: integers of `integer` (and int-or-string)
 * fields as int, `number` fields as double, objects as maps; the root's metadata carries only
 * name and generateName.
 */
export function celValue(schema: JsonSchema | undefined, value: Json, root = false): CelInput {
  if (value === null) return null;
  if (typeof value === 'number') {
    const integral = schema?.type === 'integer' || schema?.['x-kubernetes-int-or-string'] === true || (schema?.type === undefined && Number.isInteger(value));
    return integral && Number.isInteger(value) ? BigInt(value) : value;
  }
  if (typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const items = schema?.items as JsonSchema | undefined;
    return value.map((item) => celValue(items, item)) as CelInput;
  }
  const props = schema?.properties as Record<string, JsonSchema> | undefined;
  const values = typeof schema?.additionalProperties === 'object' ? (schema.additionalProperties as JsonSchema) : undefined;
  const entries = new Map<string, CelInput>();
  for (const [key, child] of Object.entries(value)) {
    if (root && key === 'metadata' && isObject(child)) {
      const metadata = new Map<string, CelInput>();
      for (const name of ['name', 'generateName']) if (typeof child[name] === 'string') metadata.set(name, child[name] as string);
      entries.set(key, metadata as CelInput);
      continue;
    }
    entries.set(key, celValue(props?.[key] ?? values, child));
  }
  return entries as CelInput;
}

const readsOldSelf = (rule: string) => /\boldSelf\b/.test(rule);

function schemaTypeName(schema: JsonSchema): string {
  return typeof schema.type === 'string' ? schema.type : schema['x-kubernetes-int-or-string'] === true ? 'integer-or-string' : 'object';
}

function causeMessage(rule: ValidationRule, schema: JsonSchema, detail: string): string {
  switch (rule.reason) {
    case 'FieldValueForbidden':
      return `Forbidden: ${detail}`;
    case 'FieldValueRequired':
      return `Required value: ${detail}`;
    case 'FieldValueDuplicate':
      return `Duplicate value: "${schemaTypeName(schema)}": ${detail}`;
    default:
      return `Invalid value: "${schemaTypeName(schema)}": ${detail}`;
  }
}

function ruleMessage(rule: ValidationRule, bindings: { self: CelInput; oldSelf: CelInput }): string {
  if (rule.messageExpression) {
    const result = celProgram(rule.messageExpression)(bindings);
    if (!isCelError(result) && typeof result === 'string' && result.trim() !== '' && !result.includes('\n')) return result;
  }
  return rule.message ?? `failed rule: ${rule.rule}`;
}

/**
 * Evaluates every rule of `schema` on `value` (and the rules below it); `old` is the old object's
 * value at the same path (undefined when absent or on CREATE).
 */
export function celRuleProblems(schema: JsonSchema, value: Json, old: Json | undefined, at: PathStep[] = []): Problem[] {
  const problems: Problem[] = [];
  const rules = (schema['x-kubernetes-validations'] as ValidationRule[] | undefined) ?? [];
  if (rules.length > 0) {
    const self = celValue(schema, value, at.length === 0);
    const oldValue = old === undefined ? undefined : celValue(schema, old, at.length === 0);
    // Validation ratcheting: on UPDATE, a rule that does not read oldSelf is not re-checked on an unchanged value.
    const unchanged = old !== undefined && jsonEqual(value, old);
    for (const rule of rules) {
      const transition = readsOldSelf(rule.rule);
      if (transition && !rule.optionalOldSelf && oldValue === undefined) continue;
      if (!transition && unchanged) continue;
      const bindings = { self, oldSelf: (rule.optionalOldSelf ? celOptional(oldValue) : (oldValue ?? null)) as CelInput };
      const result = celProgram(rule.rule)(bindings);
      if (result === true) continue;
      const steps = rule.fieldPath ? (parseRelativeFieldPath(rule.fieldPath) ?? []) : [];
      const field = formatPath([...at, ...steps]);
      const detail = isCelError(result) ? `rule evaluation error: ${result.message}` : ruleMessage(rule, bindings);
      problems.push({ field, message: causeMessage(rule, schema, detail), source: 'cel' });
    }
  }
  if (Array.isArray(value)) {
    const items = schema.items as JsonSchema | undefined;
    // List items are not correlated with the old list (no list-type map/set among the ruled lists).
    if (items) value.forEach((item, index) => problems.push(...celRuleProblems(items, item, undefined, [...at, { index }])));
  } else if (isObject(value)) {
    const props = schema.properties as Record<string, JsonSchema> | undefined;
    const values = typeof schema.additionalProperties === 'object' ? (schema.additionalProperties as JsonSchema) : undefined;
    const oldObject = isObject(old) ? old : undefined;
    for (const [key, child] of Object.entries(value)) {
      if (at.length === 0 && key === 'metadata') continue;
      const childSchema = props?.[key] ?? values;
      if (!childSchema) continue;
      const step: PathStep = props?.[key] ? { property: key } : { key };
      problems.push(...celRuleProblems(childSchema, child, oldObject?.[key], [...at, step]));
    }
  }
  return problems;
}
