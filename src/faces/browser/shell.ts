/** One browser page of the server, as its shell needs it. */
export interface PageShell {
  /** What the page is called, in its title and its noscript note ("console", "inbox"). */
  name: string;
  /** The page's title and heading ("Operator console"). */
  title: string;
  /** The heading's HTML, when it is more than the title (a link home). */
  heading?: string;
  /** Who may sign in, said on the sign-in form. */
  signInNote: string;
  /** The page's own stylesheets and classic scripts (loaded after the kit's), and its module. */
  styles: string[];
  scripts?: string[];
  module: string;
  /** The page's views: sections of `main`, hidden until its script shows them. */
  views: string;
}

/**
 * The HTML of a page of the kit: static (no data in it; the script fetches and renders with
 * textContent), its scripts and styles files of the same origin, as the Content-Security-Policy
 * requires. Every page has the same header (who is signed in, sign out), status line, retry button
 * and sign-in form, which the kit's script (kit.js) drives and its stylesheet (kit.css) styles.
 */
export const pageShell =
  (p: PageShell) =>
  (base: string): string => {
    const styles = ['kit.css', ...p.styles].map((s) => `<link rel="stylesheet" href="${base}/${s}">`);
    const scripts = (p.scripts ?? []).map((s) => `<script src="${base}/${s}" defer></script>`);
    // What the page's module imports is fetched with it, not once it has come.
    const preloads = ['kit.js', 'eventsource-parser.js'].map(
      (s) => `<link rel="modulepreload" href="${base}/${s}">`,
    );
    return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${p.title} · taskhandle</title>
<link rel="icon" href="data:,">
${[...styles, ...scripts].join('\n')}
<script type="module" src="${base}/${p.module}"></script>
${preloads.join('\n')}
</head>
<body>
<header>
  <h1>${p.heading ?? p.title}</h1>
  <p id="who" hidden></p>
  <button type="button" id="sign-out" hidden>Sign out</button>
</header>
<main>
  <p id="status" role="status" aria-live="polite">Loading the ${p.name}…</p>
  <button type="button" id="retry" hidden>Try again</button>
${signInSection(p.signInNote)}
${p.views}
</main>
<noscript><p>The ${p.name} needs JavaScript: it signs in with your API credentials, which are never sent as cookies.</p></noscript>
</body>
</html>
`;
  };

/**
 * The sign-in form every page opens with (kit.js reads #sign-in-form): the caller's API key or
 * bearer token, kept in the tab only; `note` says whose credentials the page wants.
 */
const signInSection = (
  note: string,
): string => `  <section id="sign-in" aria-labelledby="sign-in-title" hidden>
    <h2 id="sign-in-title">Sign in</h2>
    <p>${note}</p>
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
  </section>`;
