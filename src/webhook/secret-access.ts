// The confused-deputy guard every kind shares. The operator reads Secrets with its own rights and
// hands their contents to a workload or to the gateway, which sends them to a provider host; so
// every Secret an object names must be one the *requesting user* may `get` themselves, checked by
// a SubjectAccessReview as that user. Fail closed: no identity or no answer means no.
import type { ClusterLookups } from './lookups';
import type { UserInfo } from './review';
import { type Findings, lookupFailed } from './verdict';

/** A Secret an object makes the operator read, with the field that names it. */
export interface SecretReference {
  readonly name: string;
  readonly field: string;
}

export interface SecretAccessRequest {
  readonly user: UserInfo;
  readonly namespace: string;
  /** What receives the Secret's contents, for the message ("the agent may not use it either"). */
  readonly kind: 'agent' | 'model';
}

export async function checkSecretAccess(
  secrets: readonly SecretReference[],
  request: SecretAccessRequest,
  lookups: ClusterLookups,
  findings: Findings,
): Promise<void> {
  const { user, namespace, kind } = request;
  const who = user.username ? `user "${user.username}"` : 'the requesting user';
  await Promise.all(
    secrets.map(async ({ name, field }) => {
      if (!user.username) {
        findings.deny(`${field}: the request carries no user identity, so access to Secret "${name}" cannot be verified`, 403);
        return;
      }
      try {
        const review = await lookups.userMayGetSecret(user, namespace, name);
        if (!review.allowed) {
          findings.deny(
            `${field}: ${who} may not get Secret "${name}" in namespace "${namespace}", so the ${kind} may not use it either; ` +
              'reference a Secret you can read, or ask an administrator for get access to it',
            403,
          );
        }
      } catch (error) {
        findings.deny(lookupFailed(`whether ${who} may get Secret "${name}"`, error), 403);
      }
    }),
  );
}
