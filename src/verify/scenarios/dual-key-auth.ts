/**
 * Dual-key auth, both directions, in the one script call the middleware makes for an auth
 * endpoint (per-identity log + per-IP log, same hash tag, same slot):
 *  1. one username tried from many client IPs: the per-identity row stops it;
 *  2. one client IP trying many usernames: the per-IP row stops it.
 * A refused attempt is recorded in neither log (all-or-nothing), so a refusal by one row never
 * spends the other row's budget. The forged X-Forwarded-For step of the document's scenario
 * is a middleware test (which header is trusted), not a store test, and is not run here.
 */
import type { MatrixRule } from '../../design/model.js';
import { logFor } from '../shapes.js';
import type { Outcome, RuleContext } from './context.js';

export async function dualKeyAuth(ctx: RuleContext, ipRule: MatrixRule, ipNumber: number): Promise<Outcome> {
  const u = logFor(ctx.rule, 'exact');
  const ip = logFor(ipRule, 'exact');
  const scaling = [u.scaling && `${ctx.rule.id}: ${u.scaling}`, ip.scaling && `${ipRule.id}: ${ip.scaling}`].filter(Boolean).join('; ');
  const base = { params: `${ctx.rule.id} ${u.params}; ${ipRule.id} ${ip.params}`, ...(scaling ? { scaling } : {}) };
  const Lu = u.limit;
  const Li = ip.limit;
  const expected = `one username from ${Lu + 1} IPs: ${Lu} admitted, then refused by ${ctx.rule.id}; one IP with ${Li + 1} usernames: ${Li} admitted, then refused by ${ipRule.id}`;
  const ipSpec = ctx.data.specs.get(ipRule.id);
  if (!ctx.spec || !ipSpec) return { ...base, passed: false, expected, measured: 'not run: the middleware does not enforce both rules' };
  // Both rows in one limiter: the runtime checks them in one script call (same hash tag).
  const probe = ctx.inbound(
    [
      { spec: ctx.spec, shape: u, number: ctx.number },
      { spec: ipSpec, shape: ip, number: ipNumber },
    ],
    'dual',
  );
  const attempt = (user: number, address: number) => probe.as({ id: user, ip: address });
  const oneCall = (): string | undefined =>
    probe.lastKeys.length === 2 ? undefined : `the runtime sent ${probe.lastKeys.length} key(s) in one call, not both rows`;
  const problems: string[] = [];

  // 1. One username, a new client IP for every attempt.
  const victim = probe.serial;
  let admitted1 = 0;
  let refused1: { by?: string; ipKey: string } | undefined;
  for (let i = 0; i <= Lu; i++) {
    const d = await attempt(victim, 20_000 + i);
    if (d.error) return { ...base, passed: false, expected, measured: `a limiter call failed: ${d.error}` };
    const split = oneCall();
    if (split && !problems.includes(split)) problems.push(split);
    if (!d.allowed) {
      refused1 = { ...(d.deniedBy !== undefined ? { by: d.deniedBy } : {}), ipKey: probe.lastKeys[1] ?? '' };
      break;
    }
    admitted1++;
  }
  if (admitted1 !== Lu) problems.push(`one username from many IPs: ${admitted1} attempts admitted, expected ${Lu}`);
  if (!refused1) problems.push(`attempt ${Lu + 1} on one username was admitted`);
  else if (refused1.by !== ctx.rule.id)
    problems.push(`attempt ${Lu + 1} on one username was refused by key ${refused1.by}, not by ${ctx.rule.id}`);
  if (refused1 && (await ctx.store.pttl(refused1.ipKey)) !== -2) problems.push('the refused attempt was recorded in the IP log');

  // 2. One client IP, a new username for every attempt.
  const attacker = probe.serial;
  let admitted2 = 0;
  let refused2: { by?: string; userKey: string } | undefined;
  for (let i = 0; i <= Li; i++) {
    const d = await attempt(100_000 + i, attacker);
    if (d.error) return { ...base, passed: false, expected, measured: `a limiter call failed: ${d.error}` };
    if (!d.allowed) {
      refused2 = { ...(d.deniedBy !== undefined ? { by: d.deniedBy } : {}), userKey: probe.lastKeys[0] ?? '' };
      break;
    }
    admitted2++;
  }
  if (admitted2 !== Li) problems.push(`one IP with many usernames: ${admitted2} attempts admitted, expected ${Li}`);
  if (!refused2) problems.push(`attempt ${Li + 1} from one IP was admitted`);
  else if (refused2.by !== ipRule.id) problems.push(`attempt ${Li + 1} from one IP was refused by key ${refused2.by}, not by ${ipRule.id}`);
  if (refused2 && (await ctx.store.pttl(refused2.userKey)) !== -2) problems.push('the refused attempt was recorded in the username log');

  const by = (r: { by?: string } | undefined) => (r ? `refused by ${r.by ?? 'no rule'}` : 'NOT refused');
  return {
    ...base,
    passed: problems.length === 0,
    expected,
    measured: `one username: ${admitted1} admitted, then ${by(refused1)}; one IP: ${admitted2} admitted, then ${by(refused2)}; refused attempts recorded in ${problems.some((p) => p.includes('recorded')) ? 'a log' : 'neither log'}`,
    detail: problems.length
      ? problems.join('; ')
      : 'The forged X-Forwarded-For step is a middleware test and is not run against the store.',
    numbers: { usernameAdmitted: admitted1, usernameExpected: Lu, ipAdmitted: admitted2, ipExpected: Li },
  };
}
