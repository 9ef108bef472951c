// The page frame: landmarks (header, nav, main), a skip link, readable on a phone (viewport meta,
// fluid widths), one small stylesheet inline (allowed by the CSP's style hash) and no scripts
// except the copy button's, served from /static/copy.js.
import { createHash } from 'node:crypto';
import { Html, html } from './html';

export interface Viewer {
  readonly username: string;
  readonly isAdmin: boolean;
  /** The session's CSRF token, for the log-out form. */
  readonly csrf: string;
}

export const STYLE = `
:root{font-family:system-ui,sans-serif;line-height:1.5;color:#1a1a1a;background:#fff}
body{margin:0}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:#fff;padding:.5rem;z-index:1}
header{display:flex;flex-wrap:wrap;gap:1rem;align-items:center;justify-content:space-between;padding:.75rem 1rem;background:#1f3a5f;color:#fff}
header a{color:#fff}
nav ul{display:flex;flex-wrap:wrap;gap:1rem;list-style:none;margin:0;padding:0}
main{max-width:60rem;margin:0 auto;padding:1rem}
table{border-collapse:collapse;width:100%;display:block;overflow-x:auto}
th,td{text-align:left;padding:.4rem .6rem;border-bottom:1px solid #ccc;vertical-align:top}
label{display:block;font-weight:600;margin-top:.5rem}
input,select,button{font:inherit;padding:.4rem .6rem;max-width:100%}
button{cursor:pointer;background:#1f3a5f;color:#fff;border:1px solid #fff;border-radius:.25rem;margin-top:.5rem}
button.danger{background:#a4161a}
:focus-visible{outline:3px solid #f4a261;outline-offset:2px}
.card{border:1px solid #ccc;border-radius:.5rem;padding:1rem;margin:1rem 0}
.secret{font-family:ui-monospace,monospace;word-break:break-all;background:#f3f3f3;padding:.5rem;display:block}
pre{white-space:pre-wrap;word-break:break-all;background:#f3f3f3;padding:.5rem}
.notice{background:#fff3cd;border-left:4px solid #e0a800;padding:.5rem 1rem}
.error{background:#f8d7da;border-left:4px solid #a4161a;padding:.5rem 1rem}
form.inline{display:inline}
table.usage td code{word-break:break-all}
meter{width:4rem}
`;

/** For the Content-Security-Policy's style-src. */
export const STYLE_HASH = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`;

export function page(title: string, viewer: Viewer | undefined, body: Html): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · API keys</title>
<style>${new Html(STYLE)}</style>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header>
<strong>LLM API keys</strong>
${viewer
  ? html`<nav aria-label="Main"><ul>
<li><a href="/">Models</a></li>
<li><a href="/keys">My keys</a></li>
<li><a href="/usage">Usage</a></li>
${viewer.isAdmin ? html`<li><a href="/admin/keys">All keys</a></li><li><a href="/admin/audit">Audit log</a></li>` : ''}
<li><form class="inline" method="post" action="/auth/logout"><input type="hidden" name="csrf" value="${viewer.csrf}"><button type="submit">Log out ${viewer.username}</button></form></li>
</ul></nav>`
  : ''}
</header>
<main id="main" tabindex="-1">
<h1>${title}</h1>
${body}
</main>
</body>
</html>`.value;
}
