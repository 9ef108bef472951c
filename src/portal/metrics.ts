// The portal's Prometheus metrics (issue 29, Medium 7), served on their own port (never on the
// routed HTTP port, so they are not public). The group refresh sets the user gauges after each
// round, so they are those of the replica holding the Lease (`nls_portal_group_refresh_leader` 1);
// other replicas report 0. Own Registry, as the operator's, so tests can start several portals.
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';

export function portalMetrics(registry = new Registry()) {
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  return {
    registry,
    leader: new Gauge({ name: 'nls_portal_group_refresh_leader', help: '1 while this replica holds the group refresh Lease (and sets the user gauges).', registers }),
    lastRound: new Gauge({ name: 'nls_portal_group_refresh_last_round_timestamp_seconds', help: 'When the latest group refresh round finished (Unix seconds).', registers }),
    users: new Gauge({ name: 'nls_portal_users', help: 'Users the portal stores (one Secret each), as of the latest round.', registers }),
    refused: new Gauge({ name: 'nls_portal_users_refused', help: 'Users marked refused (by the issuer, or failed closed) who have not logged in since.', registers }),
    failing: new Gauge({
      name: 'nls_portal_users_refresh_failing',
      help: 'Users whose group refresh failed in the latest round for a reason other than a refusal (issuer unreachable or erring, no readable refresh token); they fail closed after portal.groupRefreshFailClosedSeconds.',
      registers,
    }),
    unreadable: new Gauge({ name: 'nls_portal_users_refresh_token_unreadable', help: 'Users whose stored refresh token no session key opens (the key it was sealed with was dropped).', registers }),
    withoutRefreshToken: new Gauge({ name: 'nls_portal_users_without_refresh_token', help: 'Users not refused who have no stored refresh token (the issuer gave none at login).', registers }),
    onOldKey: new Gauge({ name: 'nls_portal_users_refresh_token_old_key', help: 'Users whose refresh token is still sealed with an older session key after the round; 0 means the older keys can be dropped.', registers }),
    keysRevoked: new Counter({ name: 'nls_portal_keys_revoked_total', help: 'Keys the group refresh revoked, by reason (user-lost-access, user-refresh-refused, user-refresh-failing).', labelNames: ['reason'] as const, registers }),
    failedClosed: new Counter({ name: 'nls_portal_users_failed_closed_total', help: 'Users marked refused because their group refresh kept failing for portal.groupRefreshFailClosedSeconds.', registers }),
    logins: loginCounter(registers),
    keysMinted: new Counter({ name: 'nls_portal_keys_minted_total', help: 'API keys minted through the portal (its page or /api/keys).', registers }),
  };
}

/** Both outcomes exist from the start (at 0), so a dashboard shows no logins as 0, not as no data. */
function loginCounter(registers: Registry[]) {
  const logins = new Counter({
    name: 'nls_portal_logins_total',
    help: 'Logins that reached the OIDC callback, by outcome: success, or failed (expired or foreign login, not confirmed by the identity provider, not recorded, too many groups for the cookie).',
    labelNames: ['outcome'] as const,
    registers,
  });
  for (const outcome of ['success', 'failed']) logins.inc({ outcome }, 0);
  return logins;
}

export type PortalMetrics = ReturnType<typeof portalMetrics>;
