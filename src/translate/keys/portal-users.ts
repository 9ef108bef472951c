// How the key portal names and labels each user's Secret (src/portal/user-tokens.ts), here so the
// chart's admission policy for the portal (constructs/portal-write-policy.ts) pins the same names.
export const LABEL_PORTAL_USER = 'llm.nebari.dev/portal-user';
/** A user's Secret is `<prefix><hash>`, the hash also being the value of LABEL_PORTAL_USER. */
export const PORTAL_USER_SECRET_PREFIX = 'nls-portal-user-';
