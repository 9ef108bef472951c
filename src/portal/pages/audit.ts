// The audit log, for admins: who minted or revoked which key, when, and why.
import { Html, html } from './html';

/** The audit entry shape of contract 1 (src/api-keys/audit-log.ts). */
export interface AuditRow {
  readonly at: string;
  readonly action: string;
  readonly actor: string;
  readonly model: { readonly kind: string; readonly name: string };
  readonly clientId: string;
  readonly owner: string;
  readonly reason?: string;
}

export function auditPage(entries: readonly AuditRow[], filter: { user?: string; model?: string }): Html {
  return html`<form method="get" action="/admin/audit" class="card" role="search" aria-label="Filter the audit log">
<label for="a-user">User</label>
<input id="a-user" name="user" value="${filter.user ?? ''}">
<label for="a-model">Model</label>
<input id="a-model" name="model" value="${filter.model ?? ''}">
<div><button type="submit">Filter</button></div>
</form>
${entries.length === 0
  ? html`<p>No entries.</p>`
  : html`<table>
<thead><tr><th scope="col">When</th><th scope="col">Action</th><th scope="col">By</th><th scope="col">Owner</th><th scope="col">Model</th><th scope="col">Key id</th><th scope="col">Reason</th></tr></thead>
<tbody>
${entries.map((e) => html`<tr><td>${e.at}</td><td>${e.action}</td><td>${e.actor}</td><td>${e.owner}</td><td>${e.model.name}</td><td><code>${e.clientId}</code></td><td>${e.reason ?? ''}</td></tr>`)}
</tbody>
</table>`}`;
}

export function errorPage(message: string): Html {
  return html`<p class="error" role="alert">${message}</p><p><a href="/">Back to the models</a></p>`;
}
