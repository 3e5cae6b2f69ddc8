/**
 * What became of a delivery attempt: delivered (2xx), to be retried, dead-lettered, or refused by
 * the address policy (PUSH_ALLOW, PUSH_ALLOW_PUBLIC; dead-lettered too, but an operator's matter).
 */
export type DeliveryResult = 'delivered' | 'retried' | 'dead-lettered' | 'refused';

/** Hears each settled delivery attempt (metrics). Called after the outcome is stored; must be cheap. */
export interface DeliveryObserver {
  /** `latencyMs`: for a delivered notification, the time from its event to the receiver's 2xx. */
  settled(result: DeliveryResult, latencyMs?: number): void;
}
