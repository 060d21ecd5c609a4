/**
 * Design question 4: traffic shape. Every number may be left empty ("don't know"); the
 * design then states what it assumed. Previous answers are offered together ("Keep the
 * traffic: ...?"); rejected, each question offers its previous value as the default.
 */
import type { AnswersInput } from '../../answers/schema.js';
import type { Step } from '../context.js';
import { Q } from '../questions.js';
import { offerKnown, put, resolve } from '../resolve.js';

type TrafficInput = NonNullable<AnswersInput['traffic']>;

const QUESTIONS = [Q.typicalRps, Q.peakRps, Q.capacityRps, Q.burstiness, Q.clients, Q.tenants, Q.users, Q.clientRps, Q.clientsPerAddress];

export const traffic: Step = {
  id: 'traffic',
  item: 4,
  fields: QUESTIONS.map((q) => q.field),
  async run(ctx, draft) {
    const mode = await offerKnown(
      ctx,
      (list) => `Keep the traffic: ${list}?`,
      QUESTIONS.map((q) => ({ q })),
    );
    const ids = draft.identities ?? [];
    const endpoints = draft.endpoints ?? [];
    // limits keyed on an address are sized per address: asked when anonymous calls or IP-only identities need them
    const perAddress =
      endpoints.some((e) => e.anonymous && !['auth', 'webhook', 'health'].includes(e.class)) ||
      (ids.length > 0 && ids.every((i) => i === 'ip'));
    const askable = new Map<unknown, boolean>([
      // Clients are counted by API key: asked when requests are keyed on one (or the identities are not known, when the design assumes it).
      [Q.clients, draft.identities === undefined || ids.includes('api-key')],
      [Q.tenants, ids.includes('tenant')],
      [Q.users, ids.includes('user') || endpoints.some((e) => e.class === 'auth')],
      [Q.clientRps, perAddress],
      [Q.clientsPerAddress, perAddress],
    ]);
    const patch: { traffic?: TrafficInput } = {};
    for (const q of QUESTIONS) {
      const typical = patch.traffic?.typicalRps;
      const { value } = await resolve<unknown>(ctx, q, {
        ...mode,
        ask: mode.ask && askable.get(q) !== false,
        ...(q === Q.peakRps && typical !== undefined
          ? { check: (n) => ((n as number) < typical ? `The peak (${n}) cannot be below the typical rate (${typical}).` : undefined) }
          : {}),
      });
      put(patch, q.field, value);
    }
    const out = patch.traffic ?? {};
    if (out.typicalRps !== undefined && out.peakRps !== undefined && out.peakRps < out.typicalRps) {
      ctx.say(`Note: the peak (${out.peakRps}/s) is below the typical rate (${out.typicalRps}/s); check --peak-rps and --typical-rps.`);
    }
    return patch;
  },
};
