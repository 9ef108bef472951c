// Binding to a model, whether an agent to its model or a model's fallback or split to another
// model, lets the binder use that model's keys or provider. It needs the RBAC verb `bind` on the
// model, checked by a SubjectAccessReview as the requesting user. Fail closed.
import { API_GROUP } from '../api/common';
import { LLMMODEL_KIND, LLMMODEL_PLURAL } from '../api/llmmodel';
import { PASSTHROUGHMODEL_PLURAL } from '../api/passthroughmodel';
import { BIND_MODEL_VERB, type ClusterLookups, type ModelKind } from './lookups';
import type { UserInfo } from './review';
import { type Findings, lookupFailed } from './verdict';

export interface BindingCheck {
  /** The field naming the model, for the messages. */
  readonly field: string;
  readonly kind: ModelKind;
  readonly name: string;
  readonly namespace: string;
  /** What the binding does, after "may": e.g. `bind agents to`. */
  readonly action: string;
  /** The refusal without the fix, given who asked (`user "alice"`). */
  refusal(who: string): string;
  /** The way out that needs no grant, after "or": e.g. `remove it`. */
  readonly alternative: string;
}

export async function checkModelBinding(check: BindingCheck, user: UserInfo, lookups: ClusterLookups, findings: Findings): Promise<void> {
  const { field, kind, name, namespace } = check;
  if (!user.username) {
    findings.deny(`${field}: the request carries no user identity, so the right to ${check.action} ${kind} "${name}" cannot be verified`, 403);
    return;
  }
  const who = `user "${user.username}"`;
  const resource = kind === LLMMODEL_KIND ? LLMMODEL_PLURAL : PASSTHROUGHMODEL_PLURAL;
  const fix =
    `ask an administrator for the verb "${BIND_MODEL_VERB}" on it (a Role in namespace "${namespace}" with apiGroups [${API_GROUP}], ` +
    `resources [${resource}], resourceNames [${name}], verbs [${BIND_MODEL_VERB}]), or ${check.alternative}`;
  try {
    const review = await lookups.userMayBindModel(user, namespace, kind, name);
    if (!review.allowed) findings.deny(`${field}: ${check.refusal(who)}; ${fix}`, 403);
  } catch (error) {
    findings.deny(lookupFailed(`whether ${who} may ${check.action} ${kind} "${name}"`, error), 403);
  }
}
