// The confused-deputy guard every kind shares. The operator reads Secrets (and ConfigMaps) with its
// own rights and hands their contents to a workload or to the gateway, which sends them to a
// provider host; so every Secret or ConfigMap an object names must be one the *requesting user*
// may `get` themselves, checked by a SubjectAccessReview as that user. Fail closed: no identity or
// no answer means no.
import type { ClusterLookups, ReadableResource } from './lookups';
import type { UserInfo } from './review';
import { type Findings, lookupFailed } from './verdict';

/** A Secret (or ConfigMap) an object makes the operator read or mount, with the field that names it. */
export interface SecretReference {
  readonly name: string;
  readonly field: string;
  /** @default 'secrets' */
  readonly resource?: ReadableResource;
}

export interface SecretAccessRequest {
  readonly user: UserInfo;
  readonly namespace: string;
  /** What receives the Secret's contents, for the message ("the agent may not use it either"). */
  readonly kind: 'agent' | 'model';
}

const kindNames: Record<ReadableResource, string> = { secrets: 'Secret', configmaps: 'ConfigMap' };

export async function checkSecretAccess(
  secrets: readonly SecretReference[],
  request: SecretAccessRequest,
  lookups: ClusterLookups,
  findings: Findings,
): Promise<void> {
  const { user, namespace, kind } = request;
  const who = user.username ? `user "${user.username}"` : 'the requesting user';
  await Promise.all(
    secrets.map(async ({ name, field, resource = 'secrets' }) => {
      const object = `${kindNames[resource]} "${name}"`;
      if (!user.username) {
        findings.deny(`${field}: the request carries no user identity, so access to ${object} cannot be verified`, 403);
        return;
      }
      try {
        const review = await lookups.userMayGet(user, namespace, resource, name);
        if (!review.allowed) {
          findings.deny(
            `${field}: ${who} may not get ${object} in namespace "${namespace}", so the ${kind} may not use it either; ` +
              `reference a ${kindNames[resource]} you can read, or ask an administrator for get access to it`,
            403,
          );
        }
      } catch (error) {
        findings.deny(lookupFailed(`whether ${who} may get ${object}`, error), 403);
      }
    }),
  );
}
