// Offline admission of an AgentDeployment: its CRD and the AgentDeployment webhook rules (the
// referenced model is looked up among the other objects of the input).
import { AGENTDEPLOYMENT_DEFINITION } from '../api/agentdeployment';
import { agentDeploymentAdmission } from '../webhook/agentdeployment';
import { type OfflineContext, admitWith } from './admit';
import type { AdmissionResult } from './result';
import type { AgentDeploymentV1beta1 } from '../api/v1beta1';

export function admitAgentDeployment(object: Record<string, unknown>, context: OfflineContext, oldObject?: Record<string, unknown>): Promise<AdmissionResult> {
  return admitWith<AgentDeploymentV1beta1>(AGENTDEPLOYMENT_DEFINITION, agentDeploymentAdmission, object, context, oldObject);
}
