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
import { defaultFill, testIp, type Outcome, type RuleContext } from './context.js';

export async function dualKeyAuth(ctx: RuleContext, ipRule: MatrixRule, ipNumber: number): Promise<Outcome> {
  const u = logFor(ctx.rule, 'exact');
  const ip = logFor(ipRule, 'exact');
  const scaling = [u.scaling && `${ctx.rule.id}: ${u.scaling}`, ip.scaling && `${ipRule.id}: ${ip.scaling}`].filter(Boolean).join('; ');
  const base = { params: `${ctx.rule.id} ${u.params}; ${ipRule.id} ${ip.params}`, ...(scaling ? { scaling } : {}) };
  const args = [u.log!.limit, u.log!.windowMs, ip.log!.limit, ip.log!.windowMs, 1];
  const Lu = u.log!.limit;
  const Li = ip.log!.limit;
  const expected = `one username from ${Lu + 1} IPs: ${Lu} admitted, then refused by ${ctx.rule.id}; one IP with ${Li + 1} usernames: ${Li} admitted, then refused by ${ipRule.id}`;
  const userKey = (n: number) => ctx.keys.make(ctx.rule, ctx.number, 'dual', u, (inner) => (/ip/i.test(inner) ? undefined : defaultFill(inner, n)));
  const ipKey = (n: number) => ctx.keys.make(ipRule, ipNumber, 'dual', ip, (inner) => (/ip/i.test(inner) ? testIp(n) : undefined));
  const attempt = (keys: string[]) => ctx.limiter.call('sliding-window-log', keys, args);
  const problems: string[] = [];

  // 1. One username, a new client IP for every attempt.
  const victim = userKey(0);
  let admitted1 = 0;
  let refused1: { by?: number; ipKey: string } | undefined;
  for (let i = 0; i <= Lu; i++) {
    const k = ipKey(1000 + i);
    const d = await attempt([victim, k]);
    if (d.storeError) return { ...base, passed: false, expected, measured: `a limiter call failed: ${d.storeError}` };
    if (!d.allowed) {
      refused1 = { ...(d.deniedBy !== undefined ? { by: d.deniedBy } : {}), ipKey: k };
      break;
    }
    admitted1++;
  }
  if (admitted1 !== Lu) problems.push(`one username from many IPs: ${admitted1} attempts admitted, expected ${Lu}`);
  if (!refused1) problems.push(`attempt ${Lu + 1} on one username was admitted`);
  else if (refused1.by !== 1) problems.push(`attempt ${Lu + 1} on one username was refused by key ${refused1.by}, not by ${ctx.rule.id}`);
  if (refused1 && (await ctx.store.pttl(refused1.ipKey)) !== -2) problems.push('the refused attempt was recorded in the IP log');

  // 2. One client IP, a new username for every attempt.
  const attacker = ipKey(1);
  let admitted2 = 0;
  let refused2: { by?: number; userKey: string } | undefined;
  for (let i = 0; i <= Li; i++) {
    const k = userKey(2000 + i);
    const d = await attempt([k, attacker]);
    if (d.storeError) return { ...base, passed: false, expected, measured: `a limiter call failed: ${d.storeError}` };
    if (!d.allowed) {
      refused2 = { ...(d.deniedBy !== undefined ? { by: d.deniedBy } : {}), userKey: k };
      break;
    }
    admitted2++;
  }
  if (admitted2 !== Li) problems.push(`one IP with many usernames: ${admitted2} attempts admitted, expected ${Li}`);
  if (!refused2) problems.push(`attempt ${Li + 1} from one IP was admitted`);
  else if (refused2.by !== 2) problems.push(`attempt ${Li + 1} from one IP was refused by key ${refused2.by}, not by ${ipRule.id}`);
  if (refused2 && (await ctx.store.pttl(refused2.userKey)) !== -2) problems.push('the refused attempt was recorded in the username log');

  const by = (r: { by?: number } | undefined) => (r ? `refused by ${r.by === 1 ? ctx.rule.id : r.by === 2 ? ipRule.id : `key ${r.by}`}` : 'NOT refused');
  return {
    ...base,
    passed: problems.length === 0,
    expected,
    measured: `one username: ${admitted1} admitted, then ${by(refused1)}; one IP: ${admitted2} admitted, then ${by(refused2)}; refused attempts recorded in ${problems.some((p) => p.includes('recorded')) ? 'a log' : 'neither log'}`,
    detail: problems.length ? problems.join('; ') : 'The forged X-Forwarded-For step is a middleware test and is not run against the store.',
    numbers: { usernameAdmitted: admitted1, usernameExpected: Lu, ipAdmitted: admitted2, ipExpected: Li },
  };
}
