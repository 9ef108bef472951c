// LLMModel v1alpha1 <-> v1beta1 field mapping (docs/api-versions.md, L1–L6): `vllmArgs` and
// `advanced.vllm.extraArgs` become one `engineArgs` list, `advanced` is dissolved into
// `serving.env`, `scheduling` and `inferencePool`. What a mapping cannot carry (the split of the
// two argument lists) is kept by the shared restore record.
import { LLMMODEL_KIND } from '../llmmodel';
import { isObject, type JsonObject, type KindMapping, move, nonEmpty, objectAt, withoutV1beta1Fields } from './shared';

const SCHEDULING_FIELDS = ['tolerations', 'nodeSelector', 'affinity'] as const;

/** A copy of the object at `key` of `parent`, {} when absent, undefined when something else is there (left alone). */
function group(parent: JsonObject, key: string): JsonObject | undefined {
  if (!(key in parent)) return {};
  const value = parent[key];
  return isObject(value) ? { ...value } : undefined;
}

/** Sets `parent[key]` to `value` when it holds something, else removes the key. */
function place(parent: JsonObject, key: string, value: JsonObject | undefined): void {
  if (value && nonEmpty(value)) parent[key] = value;
  else delete parent[key];
}

function up(object: JsonObject): JsonObject {
  const spec = objectAt(object, 'spec');
  if (!spec) return object;
  const s: JsonObject = { ...spec };
  const serving = group(s, 'serving');
  const scheduling = group(s, 'scheduling');
  const advanced = objectAt(s, 'advanced') ? { ...(s.advanced as JsonObject) } : undefined;
  if (advanced) {
    const vllm = objectAt(advanced, 'vllm') ? { ...(advanced.vllm as JsonObject) } : undefined;
    if (vllm) {
      if (scheduling) for (const field of SCHEDULING_FIELDS) if (!(field in scheduling)) move(vllm, field, scheduling);
      if (serving && !('env' in serving)) move(vllm, 'extraEnv', serving, 'env');
      // The engine gets vllmArgs then extraArgs, so one list in that order means the same.
      if (serving && Array.isArray(vllm.extraArgs) && (serving.vllmArgs === undefined || Array.isArray(serving.vllmArgs))) {
        serving.vllmArgs = [...((serving.vllmArgs as string[] | undefined) ?? []), ...vllm.extraArgs];
        delete vllm.extraArgs;
      }
      if (Object.keys(vllm).length > 0) advanced.vllm = vllm;
      else delete advanced.vllm;
    }
    if (isObject(advanced.inferencePool) && !('inferencePool' in s)) move(advanced, 'inferencePool', s);
    if (Object.keys(advanced).length > 0) s.advanced = advanced;
    else delete s.advanced;
  }
  if (serving && !('engineArgs' in serving)) move(serving, 'vllmArgs', serving, 'engineArgs');
  if (serving && (isObject(spec.serving) || nonEmpty(serving))) s.serving = serving;
  if (scheduling && (isObject(spec.scheduling) || nonEmpty(scheduling))) s.scheduling = scheduling;
  return { ...object, spec: s };
}

function down(versioned: JsonObject): JsonObject {
  const object = withoutV1beta1Fields(versioned, ['routing', 'observability']);
  const spec = objectAt(object, 'spec');
  if (!spec) return object;
  const s: JsonObject = { ...spec };
  const serving = objectAt(s, 'serving') ? { ...(s.serving as JsonObject) } : undefined;
  const scheduling = objectAt(s, 'scheduling') ? { ...(s.scheduling as JsonObject) } : undefined;
  const advanced = group(s, 'advanced');
  const vllm = advanced ? group(advanced, 'vllm') : undefined;
  if (serving && !('vllmArgs' in serving)) move(serving, 'engineArgs', serving, 'vllmArgs');
  if (serving && vllm && !('extraEnv' in vllm)) move(serving, 'env', vllm, 'extraEnv');
  if (scheduling && vllm) for (const field of SCHEDULING_FIELDS) if (!(field in vllm)) move(scheduling, field, vllm);
  if (advanced && isObject(s.inferencePool) && !('inferencePool' in advanced)) {
    advanced.inferencePool = s.inferencePool;
    delete s.inferencePool;
  }
  if (serving) s.serving = serving;
  if (scheduling) place(s, 'scheduling', scheduling);
  if (advanced && vllm) place(advanced, 'vllm', vllm);
  if (advanced && (isObject(spec.advanced) || nonEmpty(advanced))) s.advanced = advanced;
  return { ...object, spec: s };
}

export const LLMMODEL_MAPPING: KindMapping = { kind: LLMMODEL_KIND, up, down };
