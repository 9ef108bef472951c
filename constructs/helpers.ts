// Names and image references, each defined twice side by side: as a named template for the chart's
// `_helpers.tpl` and as a TS function for plain rendering. The chart integration test renders the
// chart with default values and compares it with the plain bundles, so the twins cannot drift.
import { version } from '../src/version';
import { lowerWithoutRootDot } from '../src/translate/gateway/hostname';
import { AUDIENCES_FIX } from '../src/translate/gateway/context';

export const CHART_NAME = 'nebari-llm-serving';
/** Longest full name: leaves room for the longest suffix (`-agentdeployment-guard`) in 63 characters. */
export const FULLNAME_MAX = 40;

interface NameValues { nameOverride?: string; fullnameOverride?: string }
interface ImageValues { repository: string; tag: string; digest: string }

function trunc(s: string, n: number): string {
  return s.slice(0, n).replace(/-+$/, '');
}

export function fullname(values: NameValues, releaseName: string): string {
  if (values.fullnameOverride) return trunc(values.fullnameOverride, FULLNAME_MAX);
  const name = values.nameOverride || CHART_NAME;
  return trunc(releaseName.includes(name) ? releaseName : `${releaseName}-${name}`, FULLNAME_MAX);
}

export function imageReference(image: ImageValues): string {
  if (image.digest) return `${image.repository}@${image.digest}`;
  return `${image.repository}:${image.tag || version}`;
}

/** A copy with object keys sorted at every depth, as Helm's toJson writes maps. */
export function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortedKeys((value as Record<string, unknown>)[k])]));
  }
  return value;
}

// `false` too, as Helm's `if` reads it (platform.jwt.allowAnyAudience: false is left out).
const isEmpty = (v: unknown) => v === '' || v === undefined || v === null || v === false || (Array.isArray(v) && v.length === 0);

/** `platform` values that are DNS names (normalised like provider host names). */
const HOST_NAME_KEYS = new Set(['baseDomain', 'hostname']);
const hostValue = (k: string, v: unknown) => (HOST_NAME_KEYS.has(k) && typeof v === 'string' ? lowerWithoutRootDot(v) : v);

/**
 * The operator's gateway context (NLS_GATEWAY_CONTEXT) from `platform` values: empty settings are
 * left out so the translation applies its documented defaults, except `sectionName`, where empty
 * means "every listener"; host names (`baseDomain`, `*.hostname`) lower-cased with one trailing
 * root dot removed. Keys sorted, as Helm's toJson writes them.
 */
export function gatewayContextJson(platform: Record<string, unknown>): string {
  const problem = jwtAudiencesProblem(platform.jwt as JwtValues | undefined);
  if (problem) throw new Error(problem);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(platform)) {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      out[k] = Object.fromEntries(Object.entries(v).filter(([k2, v2]) => k2 === 'sectionName' || !isEmpty(v2)).map(([k2, v2]) => [k2, hostValue(k2, v2)]));
    } else if (!isEmpty(v)) out[k] = hostValue(k, v);
  }
  return JSON.stringify(sortedKeys(out));
}

interface JwtValues { issuer?: string; audiences?: string[]; allowAnyAudience?: boolean }

/** The message of the install-time audiences check (issue 29, Medium 9; Helm `fail` with the same text). */
export const JWT_AUDIENCES_REQUIRED = `platform.jwt.issuer is set but platform.jwt.audiences is empty: the internal endpoint would accept a token the issuer minted for any of its clients, so another application's token could be replayed against the models; ${AUDIENCES_FIX}`;

/** The install-time check of `platform.jwt.audiences`: required while the issuer is set, unless `allowAnyAudience`. */
export function jwtAudiencesProblem(jwt: JwtValues | undefined): string | undefined {
  return jwt?.issuer && !(jwt.audiences ?? []).length && !jwt.allowAnyAudience ? JWT_AUDIENCES_REQUIRED : undefined;
}

interface QuotaValues {
  rateLimitBackend: string;
  costType: string;
  defaultTier: string;
  tiers: Array<{ name: string; tokens: number; unit: string; requestsPerMinute?: number; description?: string }>;
}

/** The install-time check of `quotas.defaultTier` (Helm `fail` with the same text). */
export function defaultTierProblem(quotas: Pick<QuotaValues, 'defaultTier' | 'tiers'>): string | undefined {
  const names = quotas.tiers.map((t) => t.name);
  return names.includes(quotas.defaultTier) ? undefined : `quotas.defaultTier "${quotas.defaultTier}" is not one of quotas.tiers (${names.join(', ')}); set it to one of their names`;
}

/** The operator's quota settings (NLS_QUOTAS) from `quotas` values: cost type, default tier and tiers, keys sorted. */
export function quotasJson(quotas: QuotaValues): string {
  const problem = defaultTierProblem(quotas);
  if (problem) throw new Error(problem);
  return JSON.stringify(sortedKeys({ costType: quotas.costType, defaultTier: quotas.defaultTier, tiers: quotas.tiers }));
}

/** `_helpers.tpl`: the Helm twins of the functions above plus label sets. */
export function helpersTemplate(): string {
  const c = CHART_NAME;
  return `{{/* Full name: release name, plus the chart name unless the release name contains it; at most ${FULLNAME_MAX} characters so suffixed names fit in 63. */}}
{{- define "${c}.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc ${FULLNAME_MAX} | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc ${FULLNAME_MAX} | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc ${FULLNAME_MAX} | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Operator image: by digest when one is given, else by tag (default: the chart appVersion). */}}
{{- define "${c}.operatorImage" -}}
{{- $img := .Values.operator.image -}}
{{- if $img.digest -}}
{{- printf "%s@%s" $img.repository $img.digest -}}
{{- else -}}
{{- printf "%s:%s" $img.repository (default .Chart.AppVersion $img.tag) -}}
{{- end -}}
{{- end -}}

{{/* The operator's gateway context as JSON: empty settings left out (sectionName kept: empty means every listener); host names lower-cased, one trailing root dot removed. Fails when the issuer is set without audiences or allowAnyAudience. */}}
{{- define "${c}.gatewayContext" -}}
{{- $jwt := .Values.platform.jwt -}}
{{- if and $jwt.issuer (not $jwt.audiences) (not $jwt.allowAnyAudience) -}}
{{- fail ${JSON.stringify(JWT_AUDIENCES_REQUIRED)} -}}
{{- end -}}
{{- $out := dict -}}
{{- range $k, $v := .Values.platform -}}
{{- if kindIs "map" $v -}}
{{- $m := dict -}}
{{- range $k2, $v2 := $v -}}
{{- if or $v2 (eq $k2 "sectionName") -}}
{{- if eq $k2 "hostname" -}}
{{- $v2 = $v2 | lower | trimSuffix "." -}}
{{- end -}}
{{- $_ := set $m $k2 $v2 -}}
{{- end -}}
{{- end -}}
{{- $_ := set $out $k $m -}}
{{- else if $v -}}
{{- if eq $k "baseDomain" -}}
{{- $v = $v | lower | trimSuffix "." -}}
{{- end -}}
{{- $_ := set $out $k $v -}}
{{- end -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/* The operator's per-key quota settings as JSON; fails when the default tier is not a listed tier. */}}
{{- define "${c}.quotas" -}}
{{- $names := list -}}
{{- range .Values.quotas.tiers -}}
{{- $names = append $names .name -}}
{{- end -}}
{{- if not (has .Values.quotas.defaultTier $names) -}}
{{- fail (printf "quotas.defaultTier %q is not one of quotas.tiers (%s); set it to one of their names" .Values.quotas.defaultTier (join ", " $names)) -}}
{{- end -}}
{{- toJson (dict "costType" .Values.quotas.costType "defaultTier" .Values.quotas.defaultTier "tiers" .Values.quotas.tiers) -}}
{{- end -}}

{{/* ServiceAccount name. */}}
{{- define "${c}.serviceAccountName" -}}
{{- default (include "${c}.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{/* GatewayClass name. */}}
{{- define "${c}.gatewayClassName" -}}
{{- default (include "${c}.fullname" .) .Values.gateway.gatewayClass.name -}}
{{- end -}}

{{/* Gateway name. */}}
{{- define "${c}.gatewayName" -}}
{{- default (include "${c}.fullname" .) .Values.gateway.gateway.name -}}
{{- end -}}

{{/* Class the Gateway uses. */}}
{{- define "${c}.gatewayClassOfGateway" -}}
{{- default (include "${c}.gatewayClassName" .) .Values.gateway.gateway.className -}}
{{- end -}}

{{/* Issuer of the webhook certificate in cert-manager mode. */}}
{{- define "${c}.issuerName" -}}
{{- default (printf "%s-selfsigned" (include "${c}.fullname" .)) .Values.webhook.certificates.certManager.issuerRef.name -}}
{{- end -}}
`;
}
