// The gateway side of an LLMModel: an InferencePool over the model's serving pods, which the
// routes use as their backend. The endpoint picker (EPP) Service it names is created by the
// provider translation; only its name and port are agreed on here.
import type { ResolvedGatewayContext } from './context';
import { gatewayMetadata, ModelIdentity, sortedRecord } from './labels';
import { gatewayObjectNames } from './names';
import { INFERENCE_API_VERSION, InferencePool } from './objects';

/** Label on serving pods naming their model, selected by the InferencePool by default. */
export const SERVING_POD_MODEL_LABEL = 'llm.nebari.dev/model';
/** Label on serving pods saying what they are (the EPP and downloader pods carry other roles). */
export const SERVING_POD_ROLE_LABEL = 'llm.nebari.dev/role';
export const SERVING_POD_ROLE = 'serving';

/** The default selector of a model's serving pods (the vllm provider labels its pods with it). */
export function defaultServingPodSelector(modelName: string): Record<string, string> {
  return { [SERVING_POD_MODEL_LABEL]: gatewayObjectNames(modelName).modelLabel, [SERVING_POD_ROLE_LABEL]: SERVING_POD_ROLE };
}

export function modelInferencePool(model: ModelIdentity, context: ResolvedGatewayContext): InferencePool {
  const modelName = model.metadata.name ?? '';
  const names = gatewayObjectNames(modelName);
  const pool = context.servingPool;
  return {
    apiVersion: INFERENCE_API_VERSION,
    kind: 'InferencePool',
    metadata: gatewayMetadata(model, names.inferencePool),
    spec: {
      selector: { matchLabels: sortedRecord({ ...(pool.selector ?? defaultServingPodSelector(modelName)) }) },
      targetPorts: [{ number: pool.targetPort }],
      endpointPickerRef: {
        group: '',
        kind: 'Service',
        name: names.endpointPicker,
        port: { number: pool.endpointPickerPort },
        failureMode: pool.failureMode,
      },
    },
  };
}
