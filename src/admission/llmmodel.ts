// Offline admission of an LLMModel: its CRD and the LLMModel webhook rules, then what its provider's
// translation refuses (the operator's BuildFailed), so an offline check fails where the cluster would.
import { LLMMODEL_DEFINITION } from '../api/llmmodel';
import { llmModelAdmission } from '../webhook/llmmodel';
import { type OfflineContext, admitWith } from './admit';
import { providerRefusals } from './provider-refusals';
import type { AdmissionResult } from './result';
import type { LLMModelV1beta1 } from '../api/v1beta1';

export async function admitLLMModel(object: Record<string, unknown>, context: OfflineContext, oldObject?: Record<string, unknown>): Promise<AdmissionResult> {
  const result = await admitWith<LLMModelV1beta1>(LLMMODEL_DEFINITION, llmModelAdmission, object, context, oldObject);
  if (!result.admitted) return result;
  const refusals = providerRefusals(result.object);
  return refusals.length > 0 ? { ...result, admitted: false, problems: refusals } : result;
}
