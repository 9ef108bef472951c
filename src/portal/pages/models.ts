// Home page: the models this user may use, and the form to mint a key for one of them.
import { Html, html } from './html';
import type { PortalModel } from '../models';
import type { QuotaTier } from '../config';

export interface MintFormOptions {
  readonly csrf: string;
  readonly defaultDays: number;
  readonly maxDays: number;
  readonly tiers?: { readonly default: string; readonly tiers: readonly QuotaTier[] };
  readonly error?: string;
}

function accessText(m: PortalModel): string {
  return m.access.public ? 'everyone' : `groups: ${(m.access.groups ?? []).join(', ')}`;
}

export function modelsPage(models: readonly PortalModel[], form: MintFormOptions): Html {
  if (models.length === 0) {
    return html`<p>None of your groups gives you access to a model here. Ask the platform team to add one of your groups to a model's <code>spec.access.groups</code>.</p>`;
  }
  const mintable = models.filter((m) => !m.deleting && m.externalEnabled);
  return html`
${form.error ? html`<p class="error" role="alert">${form.error}</p>` : ''}
<section aria-labelledby="models-h">
<h2 id="models-h">Models you may use</h2>
<table>
<thead><tr><th scope="col">Model</th><th scope="col">Kind</th><th scope="col">Model id in requests</th><th scope="col">Who may use it</th><th scope="col">Status</th></tr></thead>
<tbody>
${models.map((m) => html`<tr><td>${m.ref.name}</td><td>${m.ref.kind}</td><td><code>${m.servedName}</code></td><td>${accessText(m)}</td><td>${m.deleting ? 'being deleted' : (m.phase ?? 'unknown')}${m.externalEnabled ? '' : ' (no external endpoint)'}</td></tr>`)}
</tbody>
</table>
</section>
<section class="card" aria-labelledby="mint-h">
<h2 id="mint-h">Create an API key</h2>
${mintable.length === 0
  ? html`<p>No model has its external (API key) endpoint enabled.</p>`
  : html`<form method="post" action="/keys">
<input type="hidden" name="csrf" value="${form.csrf}">
<label for="model">Model</label>
<select id="model" name="model" required>
${mintable.map((m) => html`<option value="${m.ref.kind}/${m.ref.name}">${m.ref.name} (${m.ref.kind})</option>`)}
</select>
<label for="description">Name of the key</label>
<input id="description" name="description" required maxlength="200" placeholder="e.g. laptop notebook">
<label for="days">Expires in (days, at most ${form.maxDays})</label>
<input id="days" name="days" type="number" inputmode="numeric" min="1" max="${form.maxDays}" value="${form.defaultDays}" required>
${form.tiers
  ? html`<label for="tier">Quota tier</label>
<select id="tier" name="tier">
${form.tiers.tiers.map((t) => html`<option value="${t.name}"${t.name === form.tiers!.default ? new Html(' selected') : ''}>${t.name}${t.description ? ` — ${t.description}` : ''}</option>`)}
</select>`
  : ''}
<div><button type="submit">Create key</button></div>
</form>`}
</section>`;
}
