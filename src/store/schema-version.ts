/**
 * A database migrated by a newer taskhandle may hold what this one cannot read: refuse to start
 * rather than run on it (during a rolling upgrade, the old instances still running are unaffected).
 */
export function refuseNewerSchema(
  applied: ReadonlySet<number>,
  known: readonly { version: number }[],
  where: string,
): void {
  const newest = Math.max(0, ...known.map((m) => m.version));
  const unknown = [...applied].filter((v) => v > newest);
  if (unknown.length > 0) {
    throw new Error(
      `${where} is at migration ${Math.max(...unknown)}, newer than this taskhandle knows (${newest}): run a newer version`,
    );
  }
}
