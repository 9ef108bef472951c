// Offline admission of an LLMModel: its CRD and the LLMModel webhook rules.
import { LLMMODEL_DEFINITION, type LLMModel } from '../api/llmmodel';
import { llmModelAdmission } from '../webhook/llmmodel';
import { type OfflineContext, admitWith } from './admit';
import type { AdmissionResult } from './result';

export function admitLLMModel(object: Record<string, unknown>, context: OfflineContext, oldObject?: Record<string, unknown>): Promise<AdmissionResult> {
  return admitWith<LLMModel>(LLMMODEL_DEFINITION, llmModelAdmission, object, context, oldObject);
}
