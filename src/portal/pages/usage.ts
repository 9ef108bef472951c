// The usage page: a user's own keys (tokens and cost today and this month), and for admins the
// totals per user, group and model. Without a configured Prometheus it says so, never zeros.
import type { Amount, KeyUsage, UsageReport, UsageTotal } from '../usage';
import { Html, html } from './html';

const tokens = (a: Amount, type: string) => a.tokens[type] ?? 0;
const cost = (a: Amount, currency: string | undefined) => (a.cost === undefined ? '—' : `${a.cost.toFixed(4)}${currency ? ` ${currency}` : ''}`);
const HEAD = html`<th scope="col">Input today</th><th scope="col">Output today</th><th scope="col">Cost today</th><th scope="col">Input this month</th><th scope="col">Output this month</th><th scope="col">Cost this month</th>`;
const cells = (r: { today: Amount; month: Amount }, currency: string | undefined) =>
  html`<td>${tokens(r.today, 'input')}</td><td>${tokens(r.today, 'output')}</td><td>${cost(r.today, currency)}</td><td>${tokens(r.month, 'input')}</td><td>${tokens(r.month, 'output')}</td><td>${cost(r.month, currency)}</td>`;

function keyTable(keys: readonly KeyUsage[], currency: string | undefined): Html {
  if (keys.length === 0) return html`<p>No tokens counted for your keys this month.</p>`;
  return html`<table>
<thead><tr><th scope="col">Model</th><th scope="col">Key id</th><th scope="col">Tier</th>${HEAD}</tr></thead>
<tbody>
${keys.map((k) => html`<tr><td>${k.model.name}</td><td><code>${k.clientId}</code></td><td>${k.tier}</td>${cells(k, currency)}</tr>`)}
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
