import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { ROOT } from './package-project.js';
import { type Block, codeBlocks } from './readme-blocks.js';

/**
 * The code samples of the README and docs/, and the files under examples/ they are copies of
 * (docs/contributing.md, "The README and these pages"). A JavaScript or TypeScript block is marked
 * on the line above its fence: `<!-- example: path -->` is the whole file, byte for byte;
 * `<!-- example: path#name -->` is the region of it between the lines `// #region name` and
 * `// #endregion name`, less the indentation its lines share. Its fence says the file's language.
 */

/** The fence each sample file's extension is shown with. */
const FENCE_OF: Record<string, string> = { '.mjs': 'js', '.js': 'js', '.ts': 'ts' };

/** Fences of JavaScript or TypeScript: every block with one is a sample and must be marked. */
const CODE_FENCES = new Set(['js', 'mjs', 'javascript', 'jsx', 'ts', 'typescript', 'tsx']);

export const isCode = (b: Block): boolean => CODE_FENCES.has(b.lang);

/** The pages whose samples are checked: the README, docs/*.md and each examples/<dir>/README.md. */
export function samplePages(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`);
  const examples = readdirSync(join(ROOT, 'examples'))
    .map((d) => `examples/${d}/README.md`)
    .filter((f) => existsSync(join(ROOT, f)));
  return ['README.md', ...docs, ...examples];
}

/** The text a marker stands for: the file, or its region. Throws, saying what is missing. */
export function sampleSource(marker: string): string {
  const [path = '', region] = marker.split('#', 2);
  const file = join(ROOT, path);
  if (!existsSync(file)) throw new Error(`no file ${path}: write it, or mark the block with the file it is`);
  const text = readFileSync(file, 'utf8');
  if (region === undefined) return text;
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.trim() === `// #region ${region}`);
  const end = lines.findIndex((l, i) => i > start && l.trim() === `// #endregion ${region}`);
  if (start < 0 || end < 0) {
    throw new Error(
      `${path} has no region ${region}: mark it with // #region ${region} and // #endregion ${region}`,
    );
  }
  const body = lines.slice(start + 1, end);
  const indent = Math.min(...body.filter((l) => l.trim() !== '').map((l) => /^ */.exec(l)?.[0].length ?? 0));
  return `${body.map((l) => l.slice(indent)).join('\n')}\n`;
}

/** What is wrong with the samples of `page` (a path from the root), one line each: none when all hold. */
export function sampleProblems(page: string): string[] {
  const problems: string[] = [];
  for (const b of codeBlocks(readFileSync(join(ROOT, page), 'utf8'))) {
    if (!isCode(b)) continue;
    const where = `${page}, under "${b.section}", the block beginning ${JSON.stringify(b.text.split('\n')[0])}`;
    if (!b.example) {
      problems.push(`${where}: no <!-- example: path --> marker; make it a file under examples/`);
      continue;
    }
    const fence = FENCE_OF[extname(b.example.split('#')[0] ?? '')];
    if (b.lang !== fence)
      problems.push(`${where}: fenced ${b.lang}, but ${b.example} is ${fence ?? 'not code'}`);
    let source: string;
    try {
      source = sampleSource(b.example);
    } catch (err) {
      problems.push(`${where}: ${(err as Error).message}`);
      continue;
    }
    if (b.text !== source)
      problems.push(`${where}: differs from ${b.example} ${firstDifference(b.text, source)}`);
  }
  return problems;
}

function firstDifference(shown: string, source: string): string {
  const a = shown.split('\n');
  const b = source.split('\n');
  const i = a.findIndex((line, n) => line !== b[n]);
  const n = i < 0 ? a.length : i;
  return `at its line ${n + 1}: the page has ${JSON.stringify(a[n])}, the file ${JSON.stringify(b[n])}`;
}
