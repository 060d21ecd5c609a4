/** The six test scenarios, each tied to the rules it exercises. */
import type { MatrixRule, Scenario } from './model.js';

function isBucket(r: MatrixRule): boolean {
  return (r.algorithm === 'gcra' || r.algorithm === 'token-bucket') && r.layer === 'middleware' && typeof r.burst === 'number';
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function costExpectation(burst: number, endpoint: string, cost: number): string {
  const calls = Math.floor(burst / cost);
  const left = burst % cost;
  const tail = left > 0
    ? `and a cost-1 call can still spend the ${plural(left, 'leftover token')}`
    : 'and a cost-1 call is refused too: the weighted calls spent the whole bucket';
  return `${plural(calls, 'call')} to ${endpoint} pass (burst ${burst} / cost ${cost}), the next is refused, ${tail}.`;
}

export function buildScenarios(rules: MatrixRule[]): Scenario[] {
  const bucket = rules.find((r) => r.tier === 'fairness' && isBucket(r)) ?? rules.find(isBucket);
  const weighted = rules.find((r) => isBucket(r) && (r.cost?.byEndpoint.length ?? 0) > 0);
  const open = rules.find((r) => r.failMode === 'open' && r.layer === 'middleware');
  const closed = rules.find((r) => r.failMode === 'closed' && r.layer === 'middleware');
  const authPairs = rules.filter((r) => r.tier === 'security');
  const perIdentity = authPairs.find((r) => r.identity === 'username');
  const perIp = authPairs.find((r) => r.identity === 'ip' && perIdentity && r.key?.split('}')[0] === perIdentity.key?.split('}')[0]);
  const burst = typeof bucket?.burst === 'number' ? bucket.burst : 0;
  const heaviest = weighted?.cost?.byEndpoint.reduce((a, b) => (b.cost > a.cost ? b : a));

  const list: Scenario[] = [
    {
      id: 'burst-at-boundary',
      title: 'Burst at the limit boundary',
      ruleIds: bucket ? [bucket.id] : [],
      applicable: !!bucket,
      setup: bucket ? `One fresh identity against ${bucket.id} (burst ${burst}).` : 'No token-bucket rule in middleware.',
      steps: bucket ? [`Send ${burst} requests back to back.`, 'Send one more.'] : [],
      expected: bucket ? `All ${burst} pass with the remaining count falling to 0; request ${burst + 1} gets 429 with Retry-After >= 1.` : 'Not applicable.',
    },
    {
      id: 'concurrent-race',
      title: 'Concurrent requests racing for the last tokens',
      ruleIds: bucket ? [bucket.id] : [],
      applicable: !!bucket,
      setup: bucket ? `Drain ${bucket.id} to 10 tokens left, from two or more app instances.` : 'No token-bucket rule in middleware.',
      steps: bucket ? ['Fire 200 requests for the same identity at once, spread over the instances.'] : [],
      expected: bucket ? 'Exactly 10 are admitted and 190 get 429: the check-and-consume is atomic, so no two requests spend the same token.' : 'Not applicable.',
    },
    {
      id: 'store-outage',
      title: 'Store outage in both fail modes',
      ruleIds: [open?.id, closed?.id].filter((x): x is string => !!x),
      applicable: !!(open || closed),
      setup: 'Stop the store (or block its port) while traffic flows.',
      steps: [
        ...(open ? [`Call an endpoint under ${open.id} (fails open).`] : []),
        ...(closed ? [`Call an endpoint under ${closed.id} (fails closed).`] : []),
        'Restore the store and repeat.',
      ],
      expected: `${open ? `${open.id}: admitted, ratelimit_fail_open_events_total increases and the fail-open alert fires. ` : ''}${closed ? `${closed.id}: 503 with Retry-After, never a silent pass. ` : ''}After the store returns, limits apply again without a restart.`,
    },
    {
      id: 'throttled-recovery',
      title: 'Throttled client recovers after Retry-After',
      ruleIds: bucket ? [bucket.id] : [],
      applicable: !!bucket,
      setup: bucket ? `Exhaust ${bucket.id} for one identity.` : 'No token-bucket rule in middleware.',
      steps: bucket ? ['Read Retry-After from the 429.', 'Wait exactly that long, then send one request.'] : [],
      expected: bucket ? 'The request after the wait is admitted; one sent before it would be refused.' : 'Not applicable.',
    },
    {
      id: 'dual-key-auth',
      title: 'Dual-key auth limits',
      ruleIds: perIdentity && perIp ? [perIdentity.id, perIp.id] : authPairs.map((r) => r.id),
      applicable: !!(perIdentity && perIp),
      setup: perIdentity && perIp ? `Auth rules ${perIdentity.id} (${perIdentity.rate?.requests} per identity) and ${perIp.id} (${perIp.rate?.requests} per IP).` : 'The design has no auth endpoints.',
      steps: perIdentity && perIp
        ? [
            `From many client IPs, try one username ${(perIdentity.rate?.requests ?? 0) + 1} times.`,
            `From one client IP, try ${(perIp.rate?.requests ?? 0) + 1} different usernames.`,
            'Repeat the second step with a forged X-Forwarded-For on every request.',
          ]
        : [],
      expected: perIdentity && perIp
        ? `The first is stopped by ${perIdentity.id}, the second by ${perIp.id}, the third as well: the forged header does not change the client IP. Neither 429 carries remaining-count headers.`
        : 'Not applicable.',
    },
    {
      id: 'cost-weighted-exhaustion',
      title: 'Cost-weighted exhaustion',
      ruleIds: weighted ? [weighted.id] : [],
      applicable: !!(weighted && heaviest),
      setup: weighted && heaviest ? `${weighted.id} with burst ${weighted.burst}; ${heaviest.endpoint} costs ${heaviest.cost} tokens.` : 'No endpoint carries a weight above 1.',
      steps: weighted && heaviest ? [`Call ${heaviest.endpoint} until refused.`, 'Then call a cost-1 endpoint.'] : [],
      expected: weighted && heaviest ? costExpectation(weighted.burst as number, heaviest.endpoint, heaviest.cost) : 'Not applicable.',
    },
  ];
  return list;
}
