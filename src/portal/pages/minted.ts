// The page that shows a new key, once: it is never stored anywhere the portal can read it back.
import { Html, html } from './html';
import type { PortalModel } from '../models';

/** The example request: the external endpoint's chat completions path with this model's id. */
export function exampleCurl(endpoint: string, servedName: string, apiKey: string): string {
  const body = JSON.stringify({ model: servedName, messages: [{ role: 'user', content: 'Hello!' }] });
  return [`curl ${endpoint}/v1/chat/completions \\`, `  -H "Authorization: Bearer ${apiKey}" \\`, `  -H "Content-Type: application/json" \\`, `  -d '${body.replace(/'/g, "'\\''")}'`].join('\n');
}

export function mintedPage(model: PortalModel, clientId: string, apiKey: string, expiresAt: Date, endpoint: string | undefined): Html {
  return html`
<p class="notice" role="status">Copy this key now. It is shown only once; if you lose it, revoke it and create a new one.</p>
<section class="card" aria-labelledby="key-h">
<h2 id="key-h">Key for ${model.ref.name}</h2>
<p>Key id: <code>${clientId}</code>. Expires ${expiresAt.toISOString()}.</p>
<label for="api-key">API key</label>
<output id="api-key" class="secret">${apiKey}</output>
<button type="button" data-copy="api-key">Copy key</button>
${endpoint
  ? html`<h3>Example request</h3>
<pre id="curl">${exampleCurl(endpoint, model.servedName, apiKey)}</pre>
<button type="button" data-copy="curl">Copy example</button>`
  : html`<p>Send it as <code>Authorization: Bearer &lt;key&gt;</code> to the external model endpoint, with model id <code>${model.servedName}</code>.</p>`}
<p id="copy-status" role="status" aria-live="polite"></p>
</section>
<p><a href="/keys">Back to my keys</a></p>
<script src="/static/copy.js" defer></script>`;
}

/** The copy button: the only script the portal serves. */
export const COPY_SCRIPT = `document.querySelectorAll('[data-copy]').forEach(function (b) {
  b.addEventListener('click', function () {
    var t = document.getElementById(b.getAttribute('data-copy')).textContent;
    var s = document.getElementById('copy-status');
    navigator.clipboard.writeText(t).then(function () { s.textContent = 'Copied.'; }, function () { s.textContent = 'Copy failed; select the text and copy it by hand.'; });
  });
});
`;
