// The usage page: a user's own keys (tokens and cost today and this month, and with quotas on their
// share of the tier), and for admins the totals per user, group and model. Without a configured
// Prometheus it says so, never zeros.
import type { Amount, KeyUsage, UsageReport, UsageTotal } from '../usage';
import type { QuotaShare } from '../../usage/quota-window';
import { Html, html } from './html';
import { formatCost } from '../../usage/prometheus-usage';

const tokens = (a: Amount, type: string) => a.tokens[type] ?? 0;
const cost = (a: Amount, currency: string | undefined) => (a.cost === undefined ? '—' : `${formatCost(a.cost)}${currency ? ` ${currency}` : ''}`);
const HEAD = html`<th scope="col">Input today</th><th scope="col">Output today</th><th scope="col">Cost today</th><th scope="col">Input this month</th><th scope="col">Output this month</th><th scope="col">Cost this month</th>`;
const cells = (r: { today: Amount; month: Amount }, currency: string | undefined) =>
  html`<td>${tokens(r.today, 'input')}</td><td>${tokens(r.today, 'output')}</td><td>${cost(r.today, currency)}</td><td>${tokens(r.month, 'input')}</td><td>${tokens(r.month, 'output')}</td><td>${cost(r.month, currency)}</td>`;

const count = new Intl.NumberFormat('en-US');
/** Which window a share is of, in words: the ratelimit service's windows (a Month is 30 days from the Unix epoch). */
function windowWords(q: QuotaShare): string {
  if (q.unit === 'Day') return 'today (UTC)';
  if (q.unit === 'Month') return `in the 30-day window since ${q.windowStart.slice(0, 10)}`;
  return `this ${q.unit.toLowerCase()}`;
}

/**
 * "1,200 of 10,000 tokens this hour, 12 %" (a use below 1 % but above none says "<1 %"), and
 * where the gateway does not charge the tokens, that the budget is not enforced.
 */
export function shareText(q: QuotaShare): string {
  const percent = q.used > 0 && q.share < 0.01 ? '<1' : String(Math.round(q.share * 100));
  const text = `${count.format(q.used)} of ${count.format(q.limit)} tokens ${windowWords(q)}, ${percent} %`;
  return q.enforced ? text : `${text} (not enforced: the gateway does not charge tokens to keys of external providers yet)`;
}

const shareCell = (q: QuotaShare | undefined) =>
  q ? html`<td data-quota-share="${String(q.share)}"><meter min="0" max="${String(q.limit)}" value="${String(q.used)}"></meter> ${shareText(q)}</td>` : html`<td>—</td>`;

function keyTable(keys: readonly KeyUsage[], currency: string | undefined): Html {
  if (keys.length === 0) return html`<p>No tokens counted for your keys this month.</p>`;
  // The share column only while some key's tier has a limit the portal knows (quotas on).
  const shares = keys.some((k) => k.quota);
  // Key ids break anywhere, so that the share column fits beside them on a desktop screen.
  return html`<table class="usage">
<thead><tr><th scope="col">Model</th><th scope="col">Key id</th><th scope="col">Tier</th>${HEAD}${shares ? html`<th scope="col">Share of tier</th>` : ''}</tr></thead>
<tbody>
${keys.map((k) => html`<tr><td>${k.model.name}</td><td><code>${k.clientId}</code></td><td>${k.tier}</td>${cells(k, currency)}${shares ? shareCell(k.quota) : ''}</tr>`)}
</tbody>
</table>`;
}

function totalTable(id: string, title: string, column: string, rows: readonly UsageTotal[], currency: string | undefined): Html {
  return html`<section aria-labelledby="${id}"><h2 id="${id}">${title}</h2>
${rows.length === 0
  ? html`<p>No tokens counted this month.</p>`
  : html`<table>
<thead><tr><th scope="col">${column}</th>${HEAD}</tr></thead>
<tbody>
${rows.map((r) => html`<tr><td>${r.name}</td>${cells(r, currency)}</tr>`)}
</tbody>
</table>`}
</section>`;
}

export interface AdminTotals {
  readonly byUser: readonly UsageTotal[];
  readonly byGroup: readonly UsageTotal[];
  readonly byModel: readonly UsageTotal[];
}

export function usagePage(report: UsageReport, admin: AdminTotals | undefined): Html {
  return html`<p>Tokens counted by the gateway for answers to your API keys, today and this month (UTC, from ${report.periods.month}).${report.currency ? '' : ' No prices are set, so no cost is shown.'}</p>
<section aria-labelledby="mine-h"><h2 id="mine-h">Your keys</h2>
${keyTable(report.keys, report.currency)}
</section>
${admin
  ? html`${totalTable('users-h', 'By user', 'User', admin.byUser, report.currency)}
${totalTable('groups-h', 'By group', 'Group', admin.byGroup, report.currency)}
${totalTable('models-h', 'By model', 'Model', admin.byModel, report.currency)}`
  : ''}`;
}

export function usageUnavailablePage(reason: string): Html {
  return html`<p class="notice" role="status">${reason}</p>`;
}
