// Offline admission of an LLMModel: its CRD and the LLMModel webhook rules.
import { LLMMODEL_DEFINITION } from '../api/llmmodel';
import { llmModelAdmission } from '../webhook/llmmodel';
import { type OfflineContext, admitWith } from './admit';
import type { AdmissionResult } from './result';
import type { LLMModelV1beta1 } from '../api/v1beta1';

export function admitLLMModel(object: Record<string, unknown>, context: OfflineContext, oldObject?: Record<string, unknown>): Promise<AdmissionResult> {
  return admitWith<LLMModelV1beta1>(LLMMODEL_DEFINITION, llmModelAdmission, object, context, oldObject);
}
