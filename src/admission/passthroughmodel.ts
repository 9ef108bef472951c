// Offline admission of a PassthroughModel: its CRD and the PassthroughModel webhook rules.
import { PASSTHROUGHMODEL_DEFINITION, type PassthroughModel } from '../api/passthroughmodel';
import { passthroughModelAdmission } from '../webhook/passthroughmodel';
import { type OfflineContext, admitWith } from './admit';
import type { AdmissionResult } from './result';

export function admitPassthroughModel(object: Record<string, unknown>, context: OfflineContext, oldObject?: Record<string, unknown>): Promise<AdmissionResult> {
  return admitWith<PassthroughModel>(PASSTHROUGHMODEL_DEFINITION, passthroughModelAdmission, object, context, oldObject);
}
