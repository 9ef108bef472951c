// Provider hostnames as users write them, turned into the DNS name the gateway objects carry.
// Normalisation is deliberately small (lower-case, one trailing root dot removed) so that what
// reaches Envoy is predictable; anything else that is not a DNS name is an error that says how
// to fix it. The stored spec is never rewritten: only the generated objects see the result.
import { failed, ok, Result, translationError } from './errors';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const MAX_LABEL_LENGTH = 63;
const MAX_NAME_LENGTH = 253;

/** Where the parts a host name must not contain belong instead, for the fix in error messages. */
export interface HostnameHints {
  /** Field for a port, e.g. `spec.provider.port`. */
  readonly portField?: string;
  /** Field for a path prefix, e.g. `spec.provider.pathPrefix`. */
  readonly pathField?: string;
  /** A valid value to show, e.g. `api.openai.com`. */
  readonly example?: string;
}

const PROVIDER_HINTS: HostnameHints = { portField: 'spec.provider.port', pathField: 'spec.provider.pathPrefix', example: 'api.openai.com' };

/**
 * The one normalisation host names get everywhere (provider hosts, the chart's `platform` host
 * values): lower case, and a single trailing DNS root dot removed ("host.." keeps one dot and
 * fails the checks below).
 */
export function lowerWithoutRootDot(raw: string): string {
  const lower = raw.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/**
 * Returns the effective hostname for `raw`: lower-cased, with a single trailing DNS root dot
 * removed, and then required to be a DNS-1123 subdomain. `field` names the field in errors;
 * `hints` say where a port or path belongs (by default the PassthroughModel provider fields).
 */
export function normalizeHostname(raw: string, field: string, hints: HostnameHints = PROVIDER_HINTS): Result<string> {
  const quoted = JSON.stringify(raw);
  const fail = (problem: string) => failed<string>(translationError(field, `${quoted} ${problem}`));

  const example = hints.example ? ` (e.g. ${hints.example})` : '';
  if (raw.length === 0) return failed(translationError(field, `is empty; set a host name${example}`));
  if (/\s/.test(raw)) return fail('contains whitespace; remove it');
  const portFix = hints.portField ? `put the port in ${hints.portField}` : 'remove it';
  if (raw.includes('://')) {
    return fail(`is a URL; put only the host name in ${field}${example}${hints.portField ? ` and the port in ${hints.portField}` : ''}`);
  }
  if (raw.includes('/')) {
    return fail(`has a path; put only the host name here${hints.pathField ? ` (a path prefix belongs in ${hints.pathField})` : ''}`);
  }
  if (/[?#]/.test(raw)) return fail('has a query or fragment; put only the host name here');
  if (raw.includes('@')) return fail('has user information; put only the host name here and credentials in a Secret');
  if (raw.includes(':')) return fail(`has a port; ${portFix}`);
  if (raw.includes('_')) return fail('contains an underscore, which DNS names cannot have; use "-" or the provider\'s real host name');

  // Only one root dot is accepted: "host.." still ends in an empty label after removing it.
  const hostname = lowerWithoutRootDot(raw);
  const labels = hostname.split('.');
  if (labels.some((label) => label.length === 0)) {
    return fail('has an empty label (two dots in a row, or a leading dot); remove the extra dot');
  }
  if (hostname.length > MAX_NAME_LENGTH) return fail(`is longer than ${MAX_NAME_LENGTH} characters; use a shorter host name`);
  for (const label of labels) {
    if (label.length > MAX_LABEL_LENGTH) {
      return fail(`has the label "${label}" longer than ${MAX_LABEL_LENGTH} characters; DNS labels are at most ${MAX_LABEL_LENGTH}`);
    }
    if (!DNS_LABEL.test(label)) {
      return fail(`has the label "${label}", which is not a DNS label; use letters, digits and "-", starting and ending with a letter or digit`);
    }
  }
  return ok(hostname);
}

/** True when `hostname` (already normalised) has `label` as one of its dot-separated labels. */
export function hostnameHasLabel(hostname: string, label: string): boolean {
  return hostname.split('.').includes(label);
}
