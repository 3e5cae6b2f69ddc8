/**
 * The README's code blocks as a reader sees them: which section each is under, which example file a
 * JavaScript block claims to be (`<!-- example: path -->` on the line before its fence), and each
 * shell block's commands with the output printed under them (`# ...` lines).
 */

export interface Block {
  /** The `## ` heading the block is under ('' before the first). */
  section: string;
  lang: string;
  text: string;
  /** The file the block is a copy of, from its `<!-- example: path -->` marker. */
  example?: string;
}

export function codeBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split('\n');
  let section = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (line.startsWith('## ')) section = line.slice(3).trim();
    const fence = /^```(\w*)$/.exec(line);
    if (!fence) continue;
    const start = i;
    while (++i < lines.length && lines[i] !== '```');
    const marker = /^<!-- example: (\S+) -->$/.exec(lines[start - 1] ?? '');
    blocks.push({
      section,
      lang: fence[1] ?? '',
      text: `${lines.slice(start + 1, i).join('\n')}\n`,
      ...(marker?.[1] ? { example: marker[1] } : {}),
    });
  }
  return blocks;
}

export interface Command {
  /** The command as pasted: continuation lines (ending in `\`) kept with it. */
  text: string;
  /** The lines printed under it (`# ` comment lines), without their `# `. */
  output: string[];
}

/** A shell block's commands; a whole-line `# ...` comment is output of the command above it. */
export function commands(block: string): Command[] {
  const out: Command[] = [];
  let pending = '';
  for (const line of block.split('\n')) {
    if (pending === '' && line.startsWith('# ')) {
      const last = out.at(-1);
      if (!last) throw new Error(`output before any command: ${line}`);
      last.output.push(line.slice(2));
      continue;
    }
    if (pending === '' && line.trim() === '') continue;
    pending += pending === '' ? line : `\n${line}`;
    if (!line.endsWith('\\')) {
      out.push({ text: pending, output: [] });
      pending = '';
    }
  }
  return out;
}

/** A command without its trailing `# comment` (one outside quotes: none of ours quote a `#`). */
export const withoutComment = (command: string): string => command.replace(/\s+#\s.*$/, '').trim();

/**
 * Whether a printed line matches what the README shows: `...` stands for any text, `<id>` (any
 * `<word>`) for one token of an id or value, everything else is literal.
 */
export function matchesShown(actual: string, shown: string): boolean {
  const pattern = shown
    .split(/(\.\.\.|<[a-z ]+>)/)
    .map((part) =>
      part === '...'
        ? '.*'
        : /^<[a-z ]+>$/.test(part)
          ? '[^"\\s]+'
          : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('');
  return new RegExp(`^${pattern}$`).test(actual);
}
