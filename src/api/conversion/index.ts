// Pure conversion of this project's objects between llm.nebari.dev/v1alpha1 and v1beta1
// (docs/api-versions.md). The conversion webhook (src/webhook/conversion.ts) calls `convertTo`.
import { API_GROUP, API_VERSIONS, type ApiVersionName } from '../common';
import { AGENTDEPLOYMENT_MAPPING } from './agentdeployment';
import { LLMMODEL_MAPPING } from './llmmodel';
import { PASSTHROUGHMODEL_MAPPING } from './passthroughmodel';
import { convertObject, isObject, type JsonObject, type KindMapping } from './shared';

export { restoreAnnotation } from './shared';
export type { Json, JsonObject } from './shared';

const MAPPINGS: readonly KindMapping[] = [LLMMODEL_MAPPING, PASSTHROUGHMODEL_MAPPING, AGENTDEPLOYMENT_MAPPING];

/** The version of `apiVersion` (`llm.nebari.dev/v1beta1` -> `v1beta1`), or undefined when it is not one of ours. */
export function servedVersion(apiVersion: unknown): ApiVersionName | undefined {
  if (typeof apiVersion !== 'string') return undefined;
  const [group, version] = apiVersion.split('/');
  return group === API_GROUP && (API_VERSIONS as readonly string[]).includes(version) ? (version as ApiVersionName) : undefined;
}

export type ConversionResult = { ok: true; object: JsonObject } | { ok: false; reason: string };

/**
 * `object` as `desiredAPIVersion`. Refuses only what is not ours (another group or kind, an unknown
 * version); any content of one of our objects converts.
 */
export function convertTo(object: unknown, desiredAPIVersion: string): ConversionResult {
  const to = servedVersion(desiredAPIVersion);
  if (!to) return { ok: false, reason: `desiredAPIVersion ${JSON.stringify(desiredAPIVersion)} is not served; use one of ${API_VERSIONS.map((v) => `${API_GROUP}/${v}`).join(', ')}` };
  if (!isObject(object)) return { ok: false, reason: 'an object to convert is not a JSON object' };
  if (!servedVersion(object.apiVersion)) {
    return { ok: false, reason: `apiVersion ${JSON.stringify(object.apiVersion)} is not one of ${API_VERSIONS.map((v) => `${API_GROUP}/${v}`).join(', ')}` };
  }
  const mapping = MAPPINGS.find((m) => m.kind === object.kind);
  if (!mapping) return { ok: false, reason: `kind ${JSON.stringify(object.kind)} is not converted here; served kinds: ${MAPPINGS.map((m) => m.kind).join(', ')}` };
  return { ok: true, object: convertObject(mapping, object, to) };
}
