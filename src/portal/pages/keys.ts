// Key tables: a user's own keys, and (for admins) everyone's with filters. Each row has a revoke
// form; no key value is ever shown here (the store keeps none the portal could show).
import { Html, html } from './html';
import type { ModelKey } from '../keys';

export interface KeyTableOptions {
  readonly csrf: string;
  /** Show the owner column (admin view). */
  readonly showOwner: boolean;
  /** Where the revoke form returns to. */
  readonly returnTo: string;
}

function expiry(expiresAt: string | undefined): string {
  return expiresAt ?? 'never';
}

export function keyTable(keys: readonly ModelKey[], o: KeyTableOptions): Html {
  if (keys.length === 0) return html`<p>No keys.</p>`;
  return html`<table>
<caption class="skip">API keys</caption>
<thead><tr>${o.showOwner ? html`<th scope="col">Owner</th>` : ''}<th scope="col">Model</th><th scope="col">Name</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Granted by</th><th scope="col">Key id</th><th scope="col"><span class="skip">Actions</span></th></tr></thead>
<tbody>
${keys.map(
  (k) => html`<tr>
${o.showOwner ? html`<td>${k.record.createdBy}</td>` : ''}<td>${k.model.name}</td><td>${k.record.description ?? ''}</td><td>${k.record.createdAt}</td><td>${expiry(k.record.expiresAt)}</td><td>${k.record.grantedBy === 'groups' ? `groups: ${(k.record.groups ?? []).join(', ')}` : (k.record.grantedBy ?? (k.record.source === 'portal' ? '' : 'CLI'))}${k.record.tier ? ` · tier ${k.record.tier}` : ''}</td><td><code>${k.record.clientId}</code></td>
<td><form method="post" action="/keys/revoke">
<input type="hidden" name="csrf" value="${o.csrf}">
<input type="hidden" name="model" value="${k.model.kind}/${k.model.name}">
<input type="hidden" name="clientId" value="${k.record.clientId}">
<input type="hidden" name="returnTo" value="${o.returnTo}">
<button type="submit" class="danger" aria-label="Revoke key ${k.record.description ?? k.record.clientId} for ${k.model.name}">Revoke</button>
</form></td>
</tr>`,
)}
</tbody>
</table>`;
}

export function myKeysPage(keys: readonly ModelKey[], csrf: string, flash?: string): Html {
  return html`${flash ? html`<p class="notice" role="status">${flash}</p>` : ''}
<p>Keys you created. <a href="/">Create another</a>.</p>
${keyTable(keys, { csrf, showOwner: false, returnTo: '/keys' })}`;
}

export function adminKeysPage(keys: readonly ModelKey[], csrf: string, filter: { user?: string; model?: string }, modelNames: readonly string[], flash?: string): Html {
  const returnTo = `/admin/keys?${new URLSearchParams({ ...(filter.user ? { user: filter.user } : {}), ...(filter.model ? { model: filter.model } : {}) }).toString()}`;
  return html`${flash ? html`<p class="notice" role="status">${flash}</p>` : ''}
<form method="get" action="/admin/keys" class="card" role="search" aria-label="Filter keys">
<label for="f-user">Owner</label>
<input id="f-user" name="user" value="${filter.user ?? ''}">
<label for="f-model">Model</label>
<select id="f-model" name="model">
<option value="">All models</option>
${modelNames.map((n) => html`<option value="${n}"${n === filter.model ? new Html(' selected') : ''}>${n}</option>`)}
</select>
<div><button type="submit">Filter</button></div>
</form>
<p>${keys.length} key(s).</p>
${keyTable(keys, { csrf, showOwner: true, returnTo })}`;
}
