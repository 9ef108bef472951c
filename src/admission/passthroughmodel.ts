// Offline admission of a PassthroughModel: its CRD and the PassthroughModel webhook rules.
import { PASSTHROUGHMODEL_DEFINITION } from '../api/passthroughmodel';
import { passthroughModelAdmission } from '../webhook/passthroughmodel';
import { type OfflineContext, admitWith } from './admit';
import type { AdmissionResult } from './result';
import type { PassthroughModelV1beta1 } from '../api/v1beta1';

export function admitPassthroughModel(object: Record<string, unknown>, context: OfflineContext, oldObject?: Record<string, unknown>): Promise<AdmissionResult> {
  return admitWith<PassthroughModelV1beta1>(PASSTHROUGHMODEL_DEFINITION, passthroughModelAdmission, object, context, oldObject);
}
