// Which version of each provider kind to write, detected at run time: the API group's discovery
// document lists the versions the API server serves now (a provider CRD installed, upgraded or
// removed while the operator runs is seen within `ttlMs`, without a restart); the first version
// in the provider's preference list that is served and has the kind wins.
import type { KubeRest } from '../kube/rest';
import type { ProviderResource, ServedVersions } from '../translate/providers';
import { isNotFound } from '../kube/rest';

export interface ProviderDetection {
  /** For each resource kind, the `group/version` to write; set only when every kind is served. */
  readonly served?: ServedVersions;
  /** Kinds none of whose supported versions is served, with the install hint. */
  readonly missing: readonly { resource: ProviderResource; servedVersions: readonly string[] }[];
}

/** The detection with a short-lived cache of each API group's served versions. */
export class ProviderVersions {
  private readonly groups = new Map<string, { at: number; versions: string[] }>();

  constructor(
    private readonly client: KubeRest,
    private readonly ttlMs = 10_000,
  ) {}

  /** Versions of `group` the API server serves now (empty when the group is unknown). */
  async servedVersions(group: string): Promise<string[]> {
    const cached = this.groups.get(group);
    if (cached && Date.now() - cached.at < this.ttlMs) return cached.versions;
    let versions: string[] = [];
    try {
      const doc = await this.client.request<{ versions?: { version: string }[] }>('GET', `/apis/${group}`);
      versions = (doc.versions ?? []).map((v) => v.version);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    // A version that went away must not be answered from the client's kind cache either.
    for (const old of cached?.versions ?? []) if (!versions.includes(old)) this.client.forgetDiscovery(`${group}/${old}`);
    this.groups.set(group, { at: Date.now(), versions });
    return versions;
  }

  async detect(resources: readonly ProviderResource[]): Promise<ProviderDetection> {
    const served: Record<string, string> = {};
    const missing: { resource: ProviderResource; servedVersions: string[] }[] = [];
    for (const resource of resources) {
      const versions = await this.servedVersions(resource.group);
      let chosen: string | undefined;
      for (const version of resource.versions) {
        if (versions.includes(version) && (await this.client.isServed(`${resource.group}/${version}`, resource.kind))) {
          chosen = `${resource.group}/${version}`;
          break;
        }
      }
      if (chosen) served[resource.kind] = chosen;
      else missing.push({ resource, servedVersions: versions });
    }
    return missing.length > 0 ? { missing } : { served, missing };
  }
}

/** The ProviderCRDUnavailable message: what is served, what this operator writes, what to install. */
export function describeMissing(missing: ProviderDetection['missing']): string {
  return missing
    .map(({ resource, servedVersions }) => {
      const wants = resource.versions.map((v) => `${resource.group}/${v}`).join(' or ');
      const has = servedVersions.length > 0 ? `the API server serves ${resource.group} only in ${servedVersions.join(', ')}` : `the API server does not serve the ${resource.group} API group`;
      return `${resource.kind} needs ${wants}, but ${has}; ${resource.installHint}`;
    })
    .join('; ');
}
