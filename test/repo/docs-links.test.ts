import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Every relative link of the README, docs/, the examples' and the bench package's pages reaches a file
 * that exists and, when it names one, a heading of that file: pages moved out of the README, and
 * sections renamed, must not leave a reader at a 404 or at the top of a long page.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
  ...readdirSync(join(ROOT, 'examples'))
    .map((d) => `examples/${d}/README.md`)
    .filter((f) => existsSync(join(ROOT, f))),
  'bench/README.md',
  'bench/BENCHMARKS.md',
];

/** The text outside fenced code blocks, inline code and HTML comments: where links render. */
function prose(markdown: string): string {
  return markdown
    .replace(/^```[\s\S]*?^```/gm, '')
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/`[^`\n]*`/g, '');
}

/** `[text](target)` and `![alt](target)` links, with no scheme. */
function relativeLinks(markdown: string): string[] {
  const targets = [...prose(markdown).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1] ?? '');
  return targets.filter((t) => !/^[a-z][a-z+.-]*:/i.test(t));
}

/** The anchors GitHub gives a page's headings (github-slugger's rule, duplicates numbered). */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const body = markdown.replace(/^```[\s\S]*?^```/gm, '');
  for (const [, heading = ''] of body.matchAll(/^#{1,6} +(.+?) *#* *$/gm)) {
    // Code spans keep their text (`<skill>` too); HTML tags outside them render as nothing.
    const text = heading
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .split(/(`[^`]*`)/)
      .map((part) => (part.startsWith('`') ? part.slice(1, -1) : part.replace(/<[^>]+>/g, '')))
      .join('');
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const [, id = ''] of body.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) out.add(id);
  return out;
}

function brokenLinks(page: string): string[] {
  const from = join(ROOT, page);
  const broken: string[] = [];
  for (const link of relativeLinks(readFileSync(from, 'utf8'))) {
    const [path = '', anchor] = link.split('#', 2);
    const target = path === '' ? from : join(dirname(from), decodeURIComponent(path));
    if (!existsSync(target)) {
      broken.push(`${link}: no file ${relative(ROOT, target)}`);
      continue;
    }
    if (anchor === undefined || statSync(target).isDirectory() || !target.endsWith('.md')) continue;
    if (!anchors(readFileSync(target, 'utf8')).has(anchor)) {
      broken.push(`${link}: ${relative(ROOT, target)} has no heading with the anchor #${anchor}`);
    }
  }
  return broken;
}

describe('relative links in the README, docs/, examples/ and bench/', () => {
  it('the pages to check are found', () => {
    expect(PAGES).toContain('README.md');
    expect(PAGES).toContain('docs/README.md');
    expect(PAGES.filter((p) => !existsSync(join(ROOT, p)))).toEqual([]);
    expect(PAGES.length).toBeGreaterThan(10);
  });

  it.each(PAGES)('%s: every relative link reaches a file and an anchor that exist', (page) => {
    expect(brokenLinks(page)).toEqual([]);
  });

  it('the anchors are the ones GitHub makes', () => {
    const made = anchors(
      [
        '# The same over HTTP+JSON (REST)',
        '## Stream it, and resume a dropped stream (SubscribeToTask)',
        '### `submit <skill> --input JSON [--wait]`',
        '## Notes',
        '## Notes',
        '```sh',
        '# not a heading',
        '```',
      ].join('\n'),
    );
    expect([...made]).toEqual([
      'the-same-over-httpjson-rest',
      'stream-it-and-resume-a-dropped-stream-subscribetotask',
      'submit-skill---input-json---wait',
      'notes',
      'notes-1',
    ]);
  });

  it('docs/README.md lists every page of docs/', () => {
    const index = readFileSync(join(ROOT, 'docs/README.md'), 'utf8');
    const listed = new Set(relativeLinks(index).map((l) => l.split('#')[0]));
    const pages = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md') && f !== 'README.md');
    expect(pages.filter((p) => !listed.has(p))).toEqual([]);
  });
});
