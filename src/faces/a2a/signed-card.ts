import { AgentCard } from '@a2a-js/sdk';
import { LegacyRestTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { assembleCard, type PublishedCard } from './agent-card.js';
import { type CardSigner, signCard } from './card-signature.js';

/**
 * The published card signed by `signers` (every key signs every form): the v1.0 and v0.3 cards of
 * /.well-known/agent-card.json (and agent.json) and the extended card in the forms its transports
 * send. Computed once per card and key set, never per request: ECDSA signatures differ at each
 * signing, and a card that changed at every request would defeat ETags. No signers: the card as it is.
 */
export async function signPublished(
  card: PublishedCard,
  signers: readonly CardSigner[],
  jku: string,
  /** When this signing was published: a card signed anew is a new representation. */
  published = card.published,
): Promise<PublishedCard> {
  const forms = card.forms;
  if (signers.length === 0) return assembleCard(forms, published);
  const [v1, v03] = await Promise.all([signCard(forms.v1, signers, jku), signCard(forms.v03, signers, jku)]);
  let extended: AgentCard | undefined;
  let extendedLegacy: AgentCard | undefined;
  if (forms.extended) {
    const bare = { ...forms.extended, signatures: [] };
    // What the v1.0 transports send (JSON-RPC and REST: AgentCard.toJSON; gRPC: the same fields).
    const asV1 = await signCard(AgentCard.toJSON(bare) as Record<string, unknown>, signers, jku);
    extended = { ...bare, signatures: AgentCard.fromJSON(asV1).signatures };
    // What v0.3 JSON-RPC sends: the SDK's own v0.3 translation of the card, signed as it comes out.
    const asV03 = await signCard(await v03FormOf(bare), signers, jku);
    extendedLegacy = { ...bare, signatures: AgentCard.fromJSON(asV03).signatures };
  }
  return assembleCard({ v1, v03, extended }, published, {
    unsigned: forms,
    kids: signers.map((s) => s.kid),
    extendedLegacy,
  });
}

/** The v0.3 JSON the SDK's v0.3 transports make of a core card (its translation is not exported). */
async function v03FormOf(card: AgentCard): Promise<Record<string, unknown>> {
  const handler = { getAuthenticatedExtendedAgentCard: async () => card } as unknown as A2ARequestHandler;
  const compat = await new LegacyRestTransportHandler(handler).getAuthenticatedExtendedAgentCard(
    {} as ServerCallContext,
  );
  return JSON.parse(JSON.stringify(compat)) as Record<string, unknown>;
}
