/**
 * The inbox page: static HTML (no data in it; the script fetches and renders with textContent).
 * Its script and style are files of the same origin, as the Content-Security-Policy requires.
 */
export const INBOX_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Approvals inbox · taskhandle</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/inbox/inbox.css">
<script type="module" src="/inbox/inbox.js"></script>
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
  <section id="sign-in" aria-labelledby="sign-in-title" hidden>
    <h2 id="sign-in-title">Sign in</h2>
    <p>Use the credentials you call the agent's API with. They are kept in this tab only.</p>
    <form id="sign-in-form">
      <fieldset>
        <legend>Kind of credential</legend>
        <label><input type="radio" name="kind" value="api-key" checked> API key (<code>X-API-Key</code>)</label>
        <label><input type="radio" name="kind" value="bearer"> Bearer token (JWT)</label>
      </fieldset>
      <label for="credential">Credential</label>
      <input id="credential" name="credential" type="password" autocomplete="off" required spellcheck="false">
      <button type="submit">Sign in</button>
    </form>
  </section>
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
