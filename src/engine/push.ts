import type { TaskEvent } from './events.js';
import { isInterrupted, isTerminal } from './task.js';

/** How the webhook authenticates us: sent as `Authorization: <scheme> <credentials>`. */
export interface PushAuthentication {
  scheme: string;
  credentials?: string;
}

/** Where a task's notifications go. */
export interface PushConfig {
  taskId: string;
  id: string;
  url: string;
  /** Sent back as `X-A2A-Notification-Token`, for the receiver to match. */
  token?: string;
  authentication?: PushAuthentication;
  /** Every event of the task, not only the transitions that need the caller or end the task. */
  allEvents: boolean;
  /** Wire form of the bodies (the protocol version the config was made with); the engine keeps it opaque. */
  format: string;
  createdAt: number;
}

/**
 * By default a webhook hears of the transitions its caller must act on (input-required,
 * auth-required) and of the end of the task. Each is one status event in the log, so each is
 * notified exactly once.
 */
export const notifiesByDefault = (event: TaskEvent): boolean =>
  event.kind === 'status' && (isTerminal(event.state) || isInterrupted(event.state));

/** Identifies one notification: event `seq` of task `taskId`, for config `configId`. */
export interface NotificationKey {
  taskId: string;
  configId: string;
  seq: number;
}

/** A notification due for delivery, claimed by one dispatcher under a lease. */
export interface PendingNotification extends NotificationKey {
  /** When its event was written: the start of its maximum age. */
  createdAt: number;
  /** Delivery attempts so far. */
  attempts: number;
  config: PushConfig;
}

/** What became of a delivery attempt. */
export type DeliveryOutcome =
  | { kind: 'delivered' }
  | { kind: 'retry'; at: number; error: string }
  | { kind: 'dead'; at: number; error: string };
