import { agentOverrideProblems } from '../../../src/webhook/agent-overrides';

describe('agentOverrideProblems', () => {
  it('allows hardening the pod and container security context', () => {
    expect(
      agentOverrideProblems({
        workload: {
          podSecurityContext: {
            runAsUser: 1000,
            runAsGroup: 1000,
            runAsNonRoot: true,
            fsGroup: 2000,
            supplementalGroups: [3000],
            fsGroupChangePolicy: 'OnRootMismatch',
            seccompProfile: { type: 'RuntimeDefault' },
          },
        },
        container: {
          securityContext: {
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ['ALL'] },
            seccompProfile: { type: 'Localhost', localhostProfile: 'agent.json' },
          },
        },
      }),
    ).toEqual([]);
    expect(agentOverrideProblems(undefined)).toEqual([]);
  });

  it.each([
    [{ spec: { replicas: 3 } }, 'spec.overrides.spec: is not allowed; overrides may only set workload.podSecurityContext and container.securityContext'],
    [{ workload: { hostNetwork: true } }, 'spec.overrides.workload.hostNetwork: is not allowed; workload overrides may only set podSecurityContext'],
    [{ workload: { podSecurityContext: { sysctls: [] } } }, 'spec.overrides.workload.podSecurityContext.sysctls: is not allowed'],
    [{ container: { securityContext: { privileged: true } } }, 'spec.overrides.container.securityContext.privileged: is not allowed'],
    [{ container: { securityContext: { capabilities: { add: ['NET_ADMIN'] } } } }, 'only drop is allowed (found add); capabilities may be removed, never added'],
    [{ container: { securityContext: { seccompProfile: { type: 'Unconfined' } } } }, 'only type RuntimeDefault or Localhost'],
    [{ workload: { podSecurityContext: { runAsUser: -1 } } }, 'runAsUser: must be a non-negative integer ID'],
    [{ container: { securityContext: { readOnlyRootFilesystem: 'yes' } } }, 'readOnlyRootFilesystem: must be true or false'],
    [{ workload: 'x' }, 'spec.overrides.workload: must be an object holding podSecurityContext'],
    ['x', 'spec.overrides: must be an object'],
  ])('rejects %j', (overrides, message) => {
    expect(agentOverrideProblems(overrides).join('\n')).toContain(message);
  });
});
