// deploy/: the chart's objects as plain manifests for kubectl users, rendered from the same
// constructs with default values and split the way the guarded upgrade (seed 000) applies them:
//   agentdeployment-webhook-guard.yaml  phase 1: the guard alone
//   controller.yaml                     phase 2: CRDs, RBAC, operator, webhooks without AgentDeployment routes
//   agentdeployment-webhook.yaml        phase 3: the complete webhook configurations and their Service
import { plainCopy } from '../../constructs/render-context';
import { stringify } from 'yaml';
import { crdObjects } from '../api/kinds';
import type { GeneratedFile } from '../generated-file';
import { generatedHeader } from '../generated-file';
import { PlainRelease, plainObjectsByFile } from './render';
import { ChartValues, defaultValues } from './values-schema';

export const DEPLOY_GUARD = 'deploy/agentdeployment-webhook-guard.yaml';
export const DEPLOY_CONTROLLER = 'deploy/controller.yaml';
export const DEPLOY_WEBHOOK = 'deploy/agentdeployment-webhook.yaml';

/** Several objects as one multi-document YAML stream. */
export function manifestStream(objects: readonly unknown[]): string {
  return objects.map((o) => `---\n${stringify(o, { lineWidth: 0, aliasDuplicateObjects: false })}`).join('');
}

function withWebhookSwitches(values: ChartValues, agentDeployment: boolean, guard: boolean): ChartValues {
  const v = plainCopy(values);
  v.webhook.agentDeployment.enabled = agentDeployment;
  v.webhook.upgradeGuard.enabled = guard;
  return v;
}

/** The three bundles' objects for the given values (defaults for the committed deploy/). */
export function deployBundles(values: ChartValues = defaultValues(), release: PlainRelease = {}): Record<string, unknown[]> {
  const guard = plainObjectsByFile(withWebhookSwitches(values, false, true), release)['agentdeployment-upgrade-guard.yaml'];
  const controllerFiles = plainObjectsByFile(withWebhookSwitches(values, false, false), release);
  const full = plainObjectsByFile(withWebhookSwitches(values, true, false), release);
  return {
    [DEPLOY_GUARD]: guard,
    [DEPLOY_CONTROLLER]: [...crdObjects(), ...Object.values(controllerFiles).flat()],
    [DEPLOY_WEBHOOK]: [
      ...full['webhook-service.yaml'],
      ...full['validating-webhook-configuration.yaml'],
      ...full['mutating-webhook-configuration.yaml'],
    ],
  };
}

export function deployBundleFiles(): GeneratedFile[] {
  // kubectl has no --create-namespace: the plain bundles carry the Namespace object.
  const values = defaultValues();
  values.namespace.create = true;
  return Object.entries(deployBundles(values)).map(([path, objects]) => ({ path, content: `${generatedHeader()}${manifestStream(objects)}` }));
}
