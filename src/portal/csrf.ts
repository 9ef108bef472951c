// CSRF protection for every state change (POST, PUT, PATCH, DELETE), two independent checks:
// 1. Where the request comes from: `Origin` must be the portal's own origin (NLS_PORTAL_URL). A
//    browser that sends no Origin must send `Sec-Fetch-Site: same-origin`; a request with neither
//    is refused (every browser this portal supports sends at least one on a POST).
// 2. A per-session token: the session cookie holds a random token, pages embed it in their forms
//    (`csrf` field) and API callers send it as `X-CSRF-Token`; it must match exactly.
// Forms post ordinary url-encoded bodies, so the pages need no JavaScript; the token, not the
// content type, is what a cross-site page cannot produce. SameSite=Lax cookies are a third layer.
import { timingSafeEqual } from 'node:crypto';

export const CSRF_FIELD = 'csrf';
export const CSRF_HEADER = 'x-csrf-token';

export interface StateChangeRequest {
  readonly origin?: string | null;
  readonly secFetchSite?: string | null;
  /** The token the request carries (form field or header). */
  readonly token?: string | null;
}

export type CsrfDecision = { ok: true } | { ok: false; reason: string };

export function isStateChange(method: string): boolean {
  return !['GET', 'HEAD', 'OPTIONS'].includes(method.toUpperCase());
}

function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Whether a state-changing request may proceed; `portalOrigin` is e.g. `https://keys.example.com`. */
export function checkStateChange(req: StateChangeRequest, portalOrigin: string, sessionToken: string): CsrfDecision {
  if (req.origin) {
    if (req.origin !== portalOrigin) return { ok: false, reason: `cross-site request refused: Origin ${req.origin} is not ${portalOrigin}` };
  } else if (req.secFetchSite !== 'same-origin') {
    return { ok: false, reason: 'request refused: no Origin header and Sec-Fetch-Site is not same-origin' };
  }
  if (!req.token) return { ok: false, reason: `request refused: the CSRF token is missing (form field ${CSRF_FIELD} or header X-CSRF-Token)` };
  if (!sameToken(req.token, sessionToken)) return { ok: false, reason: 'request refused: the CSRF token does not match this session; reload the page and try again' };
  return { ok: true };
}
