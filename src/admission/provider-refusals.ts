// What the operator would refuse after admission: an admitted LLMModel is handed to its provider's
// translation (a pure function, src/translate/providers) exactly as the operator hands it the stored
// object, and each translation error becomes a problem. In the cluster these objects are admitted and
// then get ProviderReady False, reason BuildFailed, with the same messages; offline, `nls validate`
// and custom builds refuse them so a GitOps CI fails where the cluster would.
import { API_GROUP_VERSION_V1BETA1 } from '../api/common';
import { convertTo } from '../api/conversion';
import { llmModelProviderName } from '../api/llmmodel';
import type { LLMModelV1beta1 } from '../api/v1beta1';
import { llmProvider } from '../translate/providers';
import type { Problem } from './result';

/**
 * The provider's refusals of `stored` (an admitted LLMModel as stored, in any served version).
 * The provider's own kinds are assumed served at their newest version (the cluster is not asked),
 * and messages name v1beta1 fields, as the BuildFailed condition does.
 */
export function providerRefusals(stored: Record<string, unknown>): Problem[] {
  const converted = stored.apiVersion === API_GROUP_VERSION_V1BETA1 ? { ok: true as const, object: stored } : convertTo(stored, API_GROUP_VERSION_V1BETA1);
  if (!converted.ok) return [];
  const model = converted.object as unknown as LLMModelV1beta1;
  const translation = llmProvider(llmModelProviderName(model.spec)).translate(model, {});
  return translation.errors.map((e) => ({ field: e.field, message: e.message, source: 'provider' }));
}
