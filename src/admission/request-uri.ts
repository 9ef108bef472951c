// The URL parsing behind the Kubernetes CEL functions `isURL` and `url`: Go's
// net/url.ParseRequestURI, which the API server uses. Only what the functions expose is kept:
// the scheme (lower-cased, as Go does), the host with port and the host name without it.

export interface RequestUri {
  readonly scheme: string;
  /** host[:port], brackets kept for IPv6. */
  readonly host: string;
  /** The host without port and without IPv6 brackets. */
  readonly hostname: string;
}

// Characters Go refuses anywhere in a URL.
// eslint-disable-next-line no-control-regex -- control characters are exactly what is looked for
const controlCharacter = /[\x00-\x1f\x7f]/;
// Characters Go accepts in a host name (RFC 3986 reg-name and sub-delims, plus a few Go allows).
const hostCharacter = /^[A-Za-z0-9\-._~!$&'()*+,;=:[\]<>"%]*$/;

/** The scheme before the first ':' (Go's getScheme); '' when the text has none. Throws like Go on "missing protocol scheme". */
function splitScheme(raw: string): { scheme: string; rest: string } {
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (/[A-Za-z]/.test(c)) continue;
    if (/[0-9+.-]/.test(c)) {
      if (i === 0) return { scheme: '', rest: raw };
      continue;
    }
    if (c === ':') {
      if (i === 0) throw new Error('missing protocol scheme');
      return { scheme: raw.slice(0, i), rest: raw.slice(i + 1) };
    }
    return { scheme: '', rest: raw };
  }
  return { scheme: '', rest: raw };
}

function parseHost(authority: string): { host: string; hostname: string } {
  const at = authority.lastIndexOf('@');
  const host = at >= 0 ? authority.slice(at + 1) : authority;
  if (host.startsWith('[')) {
    const close = host.indexOf(']');
    if (close < 0) throw new Error('missing \']\' in host');
    const port = host.slice(close + 1);
    if (port !== '' && !/^:\d*$/.test(port)) throw new Error(`invalid port "${port}" after host`);
    return { host, hostname: host.slice(1, close) };
  }
  const colon = host.lastIndexOf(':');
  if (colon >= 0 && !/^:\d*$/.test(host.slice(colon))) throw new Error(`invalid port "${host.slice(colon)}" after host`);
  if (!hostCharacter.test(host)) throw new Error(`invalid character in host name "${host}"`);
  return { host, hostname: colon >= 0 ? host.slice(0, colon) : host };
}

/** Go's url.ParseRequestURI, reduced to scheme and host; undefined where Go returns an error. */
export function parseRequestUri(raw: string): RequestUri | undefined {
  try {
    if (controlCharacter.test(raw)) return undefined;
    if (raw === '') return undefined;
    const { scheme, rest } = splitScheme(raw);
    if (!rest.startsWith('/')) {
      // "scheme:opaque" parses (no host); anything else without a leading slash does not.
      return scheme !== '' ? { scheme: scheme.toLowerCase(), host: '', hostname: '' } : undefined;
    }
    if (scheme !== '' && rest.startsWith('//')) {
      const afterSlashes = rest.slice(2);
      const end = afterSlashes.indexOf('/');
      const authority = end >= 0 ? afterSlashes.slice(0, end) : afterSlashes;
      const { host, hostname } = parseHost(authority);
      return { scheme: scheme.toLowerCase(), host, hostname };
    }
    return { scheme: scheme.toLowerCase(), host: '', hostname: '' };
  } catch {
    return undefined;
  }
}
