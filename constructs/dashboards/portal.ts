// Key portal: logins, mints, and the group refresh that revokes keys of users who lost their
// groups, from the `nls_portal_*` metrics (src/portal/metrics.ts), scraped through the chart's portal
// ServiceMonitor. The user gauges are set by the replica holding the refresh Lease, hence `max`.
import { type DashboardSpec, labelVariable } from './builder';

const SELECT = 'namespace=~"$namespace", job=~"$job"';

export const PORTAL: DashboardSpec = {
  uid: 'nls-portal',
  id: 'portal',
  title: 'LLM key portal',
  description: 'Logins, mints, users, group refresh and key revocations of the self-service key portal.',
  variables: [
    labelVariable('namespace', 'namespace', 'nls_portal_users', 'Namespace'),
    labelVariable('job', 'job', 'nls_portal_users', 'Portal metrics Service'),
  ],
  panels: [
    {
      title: 'Logins by outcome',
      description: 'Logins that reached the OIDC callback in each interval: success, or failed (expired, not confirmed by the identity provider, not recorded).',
      unit: 'short',
      queries: [{ expr: `sum by (outcome) (increase(nls_portal_logins_total{${SELECT}}[$__rate_interval]))` }],
    },
    {
      title: 'Keys minted',
      description: 'Keys minted through the portal\'s page or API in each interval (keys minted with `nls keys mint` are not counted here).',
      unit: 'short',
      queries: [{ expr: `sum(increase(nls_portal_keys_minted_total{${SELECT}}[$__rate_interval]))` }],
    },
    {
      title: 'Users',
      description: 'Users the portal stores, those refused by the issuer, and those whose group refresh is failing.',
      unit: 'short',
      queries: [
        { expr: `max(nls_portal_users{${SELECT}})`, legend: 'stored' },
        { expr: `max(nls_portal_users_refused{${SELECT}})`, legend: 'refused' },
        { expr: `max(nls_portal_users_refresh_failing{${SELECT}})`, legend: 'refresh failing' },
      ],
    },
    {
      title: 'Keys revoked by reason',
      description: 'Keys the group refresh revoked in the time range (user lost access, refresh refused, refresh kept failing).',
      unit: 'short',
      queries: [{ expr: `sum by (reason) (increase(nls_portal_keys_revoked_total{${SELECT}}[$__rate_interval]))` }],
    },
    {
      title: 'Last group refresh round',
      description: 'Time since the latest round finished; keys are not revoked while no round finishes.',
      unit: 's',
      type: 'stat',
      queries: [{ expr: `time() - max(nls_portal_group_refresh_last_round_timestamp_seconds{${SELECT}})` }],
    },
    {
      title: 'Users failed closed',
      description: 'Users marked refused because their group refresh kept failing, per second.',
      unit: 'short',
      queries: [{ expr: `sum(rate(nls_portal_users_failed_closed_total{${SELECT}}[$__rate_interval]))` }],
    },
    {
      title: 'Refresh tokens',
      description: 'Users without a stored refresh token, with one no session key opens, or with one sealed by an older session key.',
      unit: 'short',
      queries: [
        { expr: `max(nls_portal_users_without_refresh_token{${SELECT}})`, legend: 'none' },
        { expr: `max(nls_portal_users_refresh_token_unreadable{${SELECT}})`, legend: 'unreadable' },
        { expr: `max(nls_portal_users_refresh_token_old_key{${SELECT}})`, legend: 'older key' },
      ],
    },
    { title: 'Refresh leader', description: '1 for the replica holding the group refresh Lease.', unit: 'short', type: 'stat', queries: [{ expr: `max by (pod) (nls_portal_group_refresh_leader{${SELECT}})` }] },
  ],
};
