// One admission of one object, offline, in the API server's order: the schema's defaults, the
// mutating webhook's defaults (and the schema's again, as the API server re-defaults a patched
// object), pruning of undeclared fields, the metadata and OpenAPI checks, the CRD's CEL rules
// (skipped, as the API server skips them, when a blocking schema error was found) and finally the
// validating webhook's rules, which the API server calls only for an object that passed all that.
// Both served versions are admitted as the API server admits them: the schema, pruning and CEL
// rules of the version the object is written in, while the webhooks (registered for v1beta1 with
// matchPolicy Equivalent) see it converted to v1beta1, defaulted by the v1beta1 schema.
import { API_GROUP, API_VERSION_V1BETA1, API_VERSIONS, type ApiVersionName } from '../api/common';
import { convertTo, servedVersion } from '../api/conversion';
import type { JsonSchema, KindDefinition } from '../api/crd';
import { crdObject } from '../api/crd';
import { kindDefinition } from '../api/kinds';
import { type AdmissionContext, type KindAdmission, mutateForAdmission } from '../webhook/admission';
import type { ClusterLookups } from '../webhook/lookups';
import { type AdmissionRequest, type KubernetesObject, isRecord } from '../webhook/review';
import { v1alpha1FieldNames } from '../webhook/v1alpha1-fields';
import { celRuleProblems } from './cel-rules';
import { leadingField } from './field-path';
import { offlineLookups } from './offline-lookups';
import type { AdmissionResult, Problem } from './result';
import { blocksCelRules, defaultAndPrune, schemaProblems } from './structural-schema';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface OfflineContext {
  /** The operator namespace; models must live there, and objects without a namespace are put there. */
  readonly operatorNamespace: string;
  /** Namespaces whose AgentDeployments are reconciled (the operator namespace is added when missing). */
  readonly agentNamespaces?: readonly string[];
  /** The cluster as the admission sees it: the other objects of the same input, with namespaces. */
  readonly objects?: readonly KubernetesObject[];
  /** Replaces the lookups over `objects` (tests). */
  readonly lookups?: ClusterLookups;
  /** The chart value `webhook.allowedImages`: images tenants may run; empty or absent allows all. */
  readonly allowedImages?: readonly string[];
}

/** Who the offline admission acts as; secret reviews are not made offline (see offline-lookups). */
const offlineUser = { username: 'nls-validate' };

const schemas = new Map<string, JsonSchema>();

/** The kind's openAPIV3Schema of `version` from its generated CRD object, built once. */
export function kindSchema(def: KindDefinition, version: ApiVersionName = API_VERSION_V1BETA1): JsonSchema {
  const key = `${def.kind}/${version}`;
  let schema = schemas.get(key);
  if (!schema) {
    // The registry's definition carries both versions' schemas.
    const served = crdObject(kindDefinition(def.kind) ?? def).spec.versions.find((v) => v.name === version);
    if (!served) throw new Error(`${def.kind} does not serve ${version}`);
    schema = served.schema.openAPIV3Schema as JsonSchema;
    schemas.set(key, schema);
  }
  return schema;
}

/** `object` as `version` (a copy when it converts; as it is when already there or not ours). */
function asVersion(object: Record<string, unknown>, version: ApiVersionName): Record<string, unknown> {
  if (object.apiVersion === `${API_GROUP}/${version}`) return object;
  const converted = convertTo(object, `${API_GROUP}/${version}`);
  return converted.ok ? converted.object : object;
}

/** `target` made equal to `source`, in place (the result object is the caller's reference). */
function replaceContents(target: Record<string, unknown>, source: Record<string, unknown>): void {
  if (target === source) return;
  for (const key of Object.keys(target)) delete target[key];
  Object.assign(target, source);
}

// A lowercase RFC 1123 subdomain: what the API server requires of a custom resource's name.
const dnsSubdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function metadataProblems(object: Record<string, unknown>): Problem[] {
  const metadata = isRecord(object.metadata) ? object.metadata : {};
  const name = metadata.name;
  const problems: Problem[] = [];
  const add = (field: string, message: string) => problems.push({ field, message, source: 'metadata' });
  if (typeof name !== 'string' || name === '') add('metadata.name', 'Required value: name or generateName is required');
  else if (name.length > 253) add('metadata.name', `Invalid value: "${name}": must be no more than 253 characters`);
  else if (!dnsSubdomain.test(name)) {
    add(
      'metadata.name',
      `Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`,
    );
  }
  if (typeof metadata.namespace !== 'string' || metadata.namespace === '') add('metadata.namespace', 'Required value');
  for (const [which, map] of [['labels', metadata.labels], ['annotations', metadata.annotations]] as const) {
    if (!isRecord(map)) continue;
    for (const [key, value] of Object.entries(map)) {
      // Annotation keys are checked in lower case (the API server lower-cases them first).
      const keyProblem = qualifiedNameProblem(which === 'annotations' ? key.toLowerCase() : key);
      if (keyProblem) add(`metadata.${which}`, `Invalid value: "${key}": ${keyProblem}`);
      if (which === 'labels' && typeof value === 'string' && (value.length > 63 || !labelValue.test(value))) {
        add(
          `metadata.${which}`,
          `Invalid value: "${value}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (at most 63 characters)`,
        );
      }
    }
  }
  return problems;
}

// Label values and the name part of label and annotation keys (Kubernetes' qualified names).
const labelValue = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const qualifiedNamePart = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

/** Why `key` is not a qualified name (`[prefix/]name`), or undefined. */
function qualifiedNameProblem(key: string): string | undefined {
  const parts = key.split('/');
  if (parts.length > 2) return "a qualified name must consist of an optional DNS subdomain prefix and '/' and a name";
  const [prefix, name] = parts.length === 2 ? parts : [undefined, parts[0]];
  if (prefix !== undefined && (prefix.length === 0 || prefix.length > 253 || !dnsSubdomain.test(prefix))) return 'prefix part must be a lowercase RFC 1123 subdomain';
  if (name.length === 0 || name.length > 63 || !qualifiedNamePart.test(name)) {
    return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (at most 63 characters)";
  }
  return undefined;
}

/** What the mutating and validating webhooks would be sent: the v1beta1 form, and the client's version as requestKind. */
function request<T>(kind: string, version: ApiVersionName, object: KubernetesObject, old: KubernetesObject | undefined): AdmissionRequest<T> {
  return {
    uid: 'offline',
    kind: { group: API_GROUP, version: API_VERSION_V1BETA1, kind },
    requestKind: { group: API_GROUP, version, kind },
    operation: old ? 'UPDATE' : 'CREATE',
    name: object.metadata?.name,
    namespace: object.metadata?.namespace,
    userInfo: offlineUser,
    object: object as T,
    oldObject: old as T | undefined,
    dryRun: true,
  };
}

/**
 * `object` as v1beta1: what a webhook registered for v1beta1 is sent. Not pruned by the v1beta1
 * schema: what the object's own schema refuses (a wrong type) must survive the round trip to be
 * refused, as in the API server. (Its v1beta1 defaults equal the converted values: conversion
 * writes out the one default that differs, the OTLP protocol.)
 */
function webhookForm(_def: KindDefinition, object: Record<string, unknown>): Record<string, unknown> {
  return asVersion(object, API_VERSION_V1BETA1);
}

/**
 * Defaults (schema, webhook, schema again) and pruning, in place, in the object's own `version`;
 * the mutating webhook works on the v1beta1 form and its result is converted back. Returns the
 * paths pruned by the object's own schema.
 */
async function defaulted<T>(
  def: KindDefinition,
  version: ApiVersionName,
  rules: KindAdmission<T>,
  object: Record<string, unknown>,
  old: KubernetesObject | undefined,
  context: AdmissionContext,
): Promise<string[]> {
  const schema = kindSchema(def, version);
  const pruned = defaultAndPrune(schema, object as Json);
  if (isRecord(object.spec)) {
    const beta = webhookForm(def, object);
    const oldBeta = old ? webhookForm(def, old as Record<string, unknown>) : undefined;
    try {
      await mutateForAdmission(rules, beta as T, request<T>(def.kind, version, beta, oldBeta), context);
    } catch (error) {
      // As the mutating webhook: a malformed object is left to the schema's messages.
      if (!(error instanceof TypeError)) throw error;
    }
    // The patched object is converted back and defaulted in its own version.
    if (version === API_VERSION_V1BETA1) pruned.push(...defaultAndPrune(schema, beta as Json));
    replaceContents(object, asVersion(beta, version));
    pruned.push(...defaultAndPrune(schema, object as Json));
  }
  return [...new Set(pruned)];
}

/**
 * Admits `object` (a CREATE, or an UPDATE of `oldObject`) as the API server with this project's
 * CRDs and webhooks would. Never throws for bad input: every problem is in the result.
 */
export async function admitWith<T>(
  def: KindDefinition,
  rules: KindAdmission<T>,
  input: Record<string, unknown>,
  offline: OfflineContext,
  oldObject?: Record<string, unknown>,
): Promise<AdmissionResult> {
  const agentNamespaces = [offline.operatorNamespace, ...(offline.agentNamespaces ?? []).filter((n) => n !== offline.operatorNamespace)];
  const context: AdmissionContext = {
    operatorNamespace: offline.operatorNamespace,
    agentNamespaces,
    lookups: offline.lookups ?? offlineLookups(offline.objects ?? []),
    allowedImages: offline.allowedImages ?? [],
  };
  const withNamespace = (o: Record<string, unknown>) => {
    // As the API server sees it: plain JSON (no undefined, no holes in lists).
    const copy = JSON.parse(JSON.stringify(o)) as Record<string, unknown>;
    const metadata = isRecord(copy.metadata) ? copy.metadata : {};
    copy.metadata = { ...metadata, namespace: typeof metadata.namespace === 'string' && metadata.namespace ? metadata.namespace : offline.operatorNamespace };
    // The status subresource owns status: the main resource never writes it.
    delete copy.status;
    return copy;
  };
  const object = withNamespace(input);
  // A deprecated version (v1alpha1) is answered with the CRD's deprecation warning, as the API server does.
  const served = servedVersion(object.apiVersion) ? crdObject(kindDefinition(def.kind) ?? def).spec.versions.find((v) => `${API_GROUP}/${v.name}` === object.apiVersion) : undefined;
  const deprecation = served?.deprecated && typeof served.deprecationWarning === 'string' ? [served.deprecationWarning] : [];
  const done = (problems: Problem[], warnings: string[], unknownFields: string[]): AdmissionResult => ({
    admitted: problems.length === 0,
    object,
    problems,
    warnings: [...deprecation, ...unknownFields.map((f) => `unknown field "${f}"`), ...warnings],
    unknownFields,
  });

  const version = servedVersion(object.apiVersion);
  if (!version || object.kind !== def.kind) {
    const versions = API_VERSIONS.map((v) => `${API_GROUP}/${v}`).join(' or ');
    return done([{ field: 'apiVersion', message: `Invalid value: this admission is for ${def.kind} ${versions}, not ${String(object.kind)} ${String(object.apiVersion)}`, source: 'schema' }], [], []);
  }
  // The mutating webhook refuses an object without a spec object before anything else runs.
  if (!isRecord(object.spec)) {
    return done([{ field: 'spec', message: `spec: the ${def.kind} has no spec object; add one`, source: 'webhook' }], [], []);
  }
  let old: Record<string, unknown> | undefined;
  if (oldObject) {
    // The stored object, read in the version of the request.
    old = asVersion(withNamespace(oldObject), version);
    await defaulted(def, version, rules, old, undefined, context);
  }
  const unknownFields = await defaulted(def, version, rules, object, old, context);

  const schema = kindSchema(def, version);
  const structural = schemaProblems(schema, object as Json, [], old as Json | undefined);
  const problems: Problem[] = [...metadataProblems(object), ...structural];
  if (!blocksCelRules(structural)) problems.push(...celRuleProblems(schema, object as Json, old as Json | undefined));
  else problems.push({ field: '', message: 'Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation', source: 'schema' });
  if (problems.length > 0) return done(problems.map(({ field, message, source }) => ({ field, message, source })), [], unknownFields);

  const verdict = await rules.validate(request<T>(def.kind, version, webhookForm(def, object), old ? webhookForm(def, old) : undefined), context);
  // As the webhook server answers a v1alpha1 client: in its own field names.
  const own = (message: string) => (version === API_VERSION_V1BETA1 ? message : v1alpha1FieldNames(def.kind, message));
  const denials = verdict.denials.map(own).map((message): Problem => ({ field: leadingField(message) ?? '', message, source: 'webhook' }));
  return done(denials, verdict.warnings.map(own), unknownFields);
}
