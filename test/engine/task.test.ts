import { describe, expect, it } from 'vitest';
import {
  canTransition,
  isInterrupted,
  isTerminal,
  TASK_STATES,
  type TaskState,
  TRANSITIONS,
} from '../../src/engine/task.js';

describe('the transition table', () => {
  it('has an entry for every state in TASK_STATES and no other', () => {
    expect(Object.keys(TRANSITIONS).sort()).toEqual([...TASK_STATES].sort());
    for (const targets of Object.values(TRANSITIONS)) {
      for (const to of targets) expect(TASK_STATES).toContain(to);
    }
  });

  it('gives terminal states no exits, and every other state a way to end', () => {
    expect(TASK_STATES.filter(isTerminal).sort()).toEqual(['canceled', 'completed', 'failed', 'rejected']);
    for (const state of TASK_STATES) {
      if (isTerminal(state)) expect(TRANSITIONS[state]).toEqual([]);
      else {
        expect(TRANSITIONS[state].some(isTerminal), state).toBe(true);
        expect(canTransition(state, 'canceled'), `${state} -> canceled`).toBe(true);
      }
    }
  });

  it('reaches every state from submitted', () => {
    const seen = new Set<TaskState>(['submitted']);
    const queue: TaskState[] = ['submitted'];
    for (let s = queue.shift(); s; s = queue.shift()) {
      for (const to of TRANSITIONS[s]) {
        if (!seen.has(to)) {
          seen.add(to);
          queue.push(to);
        }
      }
    }
    expect([...seen].sort()).toEqual([...TASK_STATES].sort());
  });

  it('canTransition agrees with the table', () => {
    for (const from of TASK_STATES) {
      for (const to of TASK_STATES) expect(canTransition(from, to)).toBe(TRANSITIONS[from].includes(to));
    }
    expect(canTransition('completed', 'working')).toBe(false);
    expect(canTransition('submitted', 'working')).toBe(true);
  });

  it('an interrupted state waits for the caller and goes back to the queue', () => {
    expect(TASK_STATES.filter(isInterrupted).sort()).toEqual(['auth-required', 'input-required']);
    for (const state of TASK_STATES.filter(isInterrupted)) {
      expect(isTerminal(state)).toBe(false);
      expect(canTransition(state, 'submitted')).toBe(true);
    }
  });
});
