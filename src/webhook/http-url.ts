// Checks a user-written http(s) URL before an agent is configured with it. The WHATWG parser is
// forgiving (it trims whitespace, accepts backslashes, fills in missing parts), so the raw text
// is checked first and the parser only confirms what is left.

const schemePattern = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//;

/** Why `raw` is not an absolute http(s) URL with a host, or undefined when it is one. */
export function httpURLProblem(raw: string, field: string): string | undefined {
  const quoted = JSON.stringify(raw);
  const fix = 'write it as https://host[:port][/path]';
  if (/\s/.test(raw)) return `${field}: ${quoted} contains whitespace; remove it`;
  const scheme = schemePattern.exec(raw);
  if (!scheme) return `${field}: ${quoted} is not an absolute URL; ${fix}`;
  if (!['http', 'https'].includes(scheme[1].toLowerCase())) {
    return `${field}: ${quoted} uses the scheme "${scheme[1]}"; use http or https`;
  }
  const rest = raw.slice(scheme[0].length);
  const authority = rest.split(/[/?#]/, 1)[0];
  if (authority.includes('@')) {
    return `${field}: ${quoted} contains a user name or password; remove it and put the credential in a Secret referenced by credentialsRef`;
  }
  if (authority === '') return `${field}: ${quoted} has no host; ${fix}`;
  let portText: string | undefined;
  if (authority.startsWith('[')) {
    const close = authority.indexOf(']');
    if (close < 0) return `${field}: ${quoted} has an unclosed IPv6 bracket; write it as http://[2001:db8::1]:8080`;
    const after = authority.slice(close + 1);
    if (after !== '' && !after.startsWith(':')) return `${field}: ${quoted} has text after the IPv6 address; ${fix}`;
    portText = after === '' ? undefined : after.slice(1);
  } else {
    const colons = authority.split(':').length - 1;
    if (colons > 1) return `${field}: ${quoted} has an IPv6 address without brackets; write it as http://[2001:db8::1]:8080`;
    if (colons === 1) portText = authority.slice(authority.indexOf(':') + 1);
    if (authority.startsWith(':')) return `${field}: ${quoted} has no host; ${fix}`;
  }
  if (portText !== undefined) {
    const port = /^[0-9]{1,5}$/.test(portText) ? Number(portText) : NaN;
    if (!(port >= 1 && port <= 65535)) return `${field}: ${quoted} has the port "${portText}"; use a port from 1 to 65535`;
  }
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    return `${field}: ${quoted} is not a valid URL; ${fix}`;
  }
  if (parsed.hostname === '') return `${field}: ${quoted} has no host; ${fix}`;
  return undefined;
}
