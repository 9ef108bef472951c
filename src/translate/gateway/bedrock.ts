// AWS Bedrock specifics: the runtime endpoint is derived from the region (as the AWS SDK's
// endpoint resolver does, without any AWS call), and a host name override must name the region
// because requests are signed (SigV4) for the region in the BackendSecurityPolicy.
import { failed, ok, Result, translationError } from './errors';
import { hostnameHasLabel } from './hostname';

const REGION_FIELD = 'spec.provider.backend.bedrock.region';
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** DNS suffix of each AWS partition, chosen by region prefix (longest prefix first). */
const PARTITION_DNS_SUFFIXES: ReadonlyArray<readonly [prefix: string, suffix: string]> = [
  ['us-isob-', 'sc2s.sgov.gov'],
  ['us-isof-', 'csp.hci.ic.gov'],
  ['us-iso-', 'c2s.ic.gov'],
  ['eu-isoe-', 'cloud.adc-e.uk'],
  ['cn-', 'amazonaws.com.cn'],
];

/** Checks the region is a DNS label, since it becomes part of the endpoint host name. */
export function validateBedrockRegion(region: string | undefined): Result<string> {
  if (!region) {
    return failed(translationError(REGION_FIELD, 'is required for the Bedrock backend; set the AWS region, for example us-east-1'));
  }
  if (!DNS_LABEL.test(region)) {
    return failed(translationError(REGION_FIELD, `${JSON.stringify(region)} is not a region name; use the lower-case AWS region code such as us-east-1`));
  }
  return ok(region);
}

/** `bedrock-runtime.<region>.<partition DNS suffix>`, e.g. bedrock-runtime.us-east-1.amazonaws.com. */
export function bedrockRuntimeHostname(region: string): string {
  const suffix = PARTITION_DNS_SUFFIXES.find(([prefix]) => region.startsWith(prefix))?.[1] ?? 'amazonaws.com';
  return `bedrock-runtime.${region}.${suffix}`;
}

/**
 * An AWS override host name (already normalised) must carry the region as one of its labels. A
 * host outside amazonaws (a proxy in front of Bedrock) is taken as given, as the CRD rule does:
 * its name says nothing about where the proxy forwards.
 */
export function checkBedrockHostnameOverride(hostname: string, region: string): Result<string> {
  if (!hostname.includes('.amazonaws.') || hostnameHasLabel(hostname, region)) return ok(hostname);
  return failed(
    translationError(
      'spec.provider.hostname',
      `"${hostname}" does not contain the region "${region}" of spec.provider.backend.bedrock.region; requests are signed for that region, so use a regional endpoint such as ${bedrockRuntimeHostname(region)} or fix the region`,
    ),
  );
}
