// biome-ignore-all lint/correctness/noUnusedImports: api.md's import line, type-checked: a name it stops exporting fails here
// #region import
import { ConfigError, createServer, defineSkill, JobError } from 'taskhandle';
// #endregion import
