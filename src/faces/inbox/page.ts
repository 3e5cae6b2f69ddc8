import { signInSection } from '../http/browser-page.js';

/**
 * The inbox page: static HTML (no data in it; the script fetches and renders with textContent).
 * Its script and style are files of the same origin, as the Content-Security-Policy requires.
 */
export const INBOX_PAGE = (base: string): string => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Approvals inbox · taskhandle</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${base}/inbox.css">
<script type="module" src="${base}/inbox.js"></script>
</head>
<body>
<header>
  <h1>Approvals inbox</h1>
  <p id="who" hidden></p>
  <button type="button" id="sign-out" hidden>Sign out</button>
</header>
<main>
  <p id="status" role="status" aria-live="polite">Loading the inbox…</p>
  <button type="button" id="retry" hidden>Try again</button>
${signInSection("Use the credentials you call the agent's API with. They are kept in this tab only.")}
  <section id="inbox" aria-labelledby="inbox-title" hidden>
    <h2 id="inbox-title">Waiting for you</h2>
    <p id="summary"></p>
    <ul id="tasks"></ul>
  </section>
</main>
<noscript><p>The inbox needs JavaScript: it signs in with your API credentials, which are never sent as cookies.</p></noscript>
</body>
</html>
`;
