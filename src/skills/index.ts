import type { AnySkill } from '../engine/skill.js';
import { approvalSkill } from './approval.js';
import { batchSkill } from './batch.js';
import { exportSkill } from './export.js';
import { sleepSkill } from './sleep.js';

/** The skills this server ships. */
export const BUILTIN_SKILLS: readonly AnySkill[] = [exportSkill, sleepSkill, approvalSkill, batchSkill()];
