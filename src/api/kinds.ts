// The registry of this project's kinds and the generated CRD files built from it.
import { stringify } from 'yaml';
import type { GeneratedFile } from '../generated-file';
import { generatedHeader } from '../generated-file';
import { AGENTDEPLOYMENT_DEFINITION } from './agentdeployment';
import { API_GROUP } from './common';
import { crdFileName, crdObject } from './crd';
import type { CrdJson, JsonSchema, KindDefinition } from './crd';
import { LLMMODEL_DEFINITION } from './llmmodel';
import { PASSTHROUGHMODEL_DEFINITION } from './passthroughmodel';

import { AgentDeploymentV1beta1Schema, LLMModelV1beta1Schema, PassthroughModelV1beta1Schema } from './v1beta1';

/** Every kind with both served versions, in the order CRDs and docs list them. */
export const KIND_DEFINITIONS: readonly KindDefinition[] = [
  { ...LLMMODEL_DEFINITION, v1beta1Schema: LLMModelV1beta1Schema },
  { ...PASSTHROUGHMODEL_DEFINITION, v1beta1Schema: PassthroughModelV1beta1Schema },
  { ...AGENTDEPLOYMENT_DEFINITION, v1beta1Schema: AgentDeploymentV1beta1Schema },
];

/** Names of our CRDs (`<plural>.llm.nebari.dev`): the operator injects the conversion webhook's CA into them. */
export const CRD_NAMES: readonly string[] = KIND_DEFINITIONS.map((d) => `${d.plural}.${API_GROUP}`);

/** The definition of `kind`, or undefined for a kind that is not ours. */
export function kindDefinition(kind: string): KindDefinition | undefined {
  return KIND_DEFINITIONS.find((d) => d.kind === kind);
}

/** The CustomResourceDefinitions of all kinds as plain JSON objects (for the chart and the CLI). */
export function crdObjects(): CrdJson[] {
  return KIND_DEFINITIONS.map(crdObject);
}

/** Deterministic YAML of one CRD: no line folding, no anchors, keys in definition order. */
export function crdYaml(crd: JsonSchema): string {
  return stringify(crd, { lineWidth: 0, aliasDuplicateObjects: false });
}

/** `crds/llm.nebari.dev_<plural>.yaml`, one file per kind. */
export function crdFiles(): GeneratedFile[] {
  return KIND_DEFINITIONS.map((def) => ({
    path: `crds/${crdFileName(def)}`,
    content: `${generatedHeader()}${crdYaml(crdObject(def))}`,
  }));
}
