// The Kubernetes CEL library functions the CRDs' rules use, on top of @bufbuild/cel's standard
// library and its strings extension (lowerAscii, replace, ...). `matches` is the standard one,
// which uses an RE2 engine like the API server.
//  - isURL(string) / url(string).getScheme() / .getHostname(): Go's url.ParseRequestURI.
//  - optional oldSelf (`optionalOldSelf: true`): `oldSelf.hasValue()`, `oldSelf.value()`.
// @bufbuild/cel has no optional or URL types, so a URL is carried as its (valid) string and an
// optional as a map with a private key; the API server has compiled every rule, so these methods
// are only ever reached the way the rules use them.
import { type CelFunc, CelScalar, celFunc, celMap, celMethod, mapType } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { parseRequestUri } from './request-uri';

const optionalMarker = '\u0000optional';
const optionalValue = '\u0000value';
const optionalType = mapType(CelScalar.STRING, CelScalar.DYN);

/** The optional `oldSelf` of a rule with `optionalOldSelf: true`: empty on CREATE. */
export function celOptional(value: unknown): ReturnType<typeof celMap> {
  const entries = new Map<string, unknown>([[optionalMarker, true]]);
  if (value !== undefined) entries.set(optionalValue, value);
  return celMap(entries as never);
}

function parsedUrl(text: string) {
  const parsed = parseRequestUri(text);
  if (!parsed) throw new Error(`URL parse error during conversion from string: ${JSON.stringify(text)}`);
  return parsed;
}

export const kubernetesCelFunctions: readonly CelFunc[] = [
  ...strings,
  celFunc('isURL', [CelScalar.STRING], CelScalar.BOOL, (text) => parseRequestUri(text) !== undefined),
  celFunc('url', [CelScalar.STRING], CelScalar.STRING, (text) => (parsedUrl(text), text)),
  celMethod('getScheme', CelScalar.STRING, [], CelScalar.STRING, function () {
    return parsedUrl(this).scheme;
  }),
  celMethod('getHostname', CelScalar.STRING, [], CelScalar.STRING, function () {
    return parsedUrl(this).hostname;
  }),
  celMethod('getHost', CelScalar.STRING, [], CelScalar.STRING, function () {
    return parsedUrl(this).host;
  }),
  celMethod('hasValue', optionalType, [], CelScalar.BOOL, function () {
    if (!this.has(optionalMarker)) throw new Error('hasValue() applies to optional values only');
    return this.has(optionalValue);
  }),
  celMethod('value', optionalType, [], CelScalar.DYN, function () {
    if (!this.has(optionalMarker) || !this.has(optionalValue)) throw new Error('optional.none() dereference');
    return this.get(optionalValue) as never;
  }),
];
