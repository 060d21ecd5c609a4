/** The view of the worst-case table (a subsection of the algorithm decisions). */
import type { Design } from '../../design/model.js';
import { luaScriptFor } from '../../design/algorithms.js';
import { worstCaseTable } from '../../design/worst-case.js';
import { fmtNumber } from '../format.js';
import { ratePer, shownRate } from '../../format.js';
import { algorithmName, layerName } from './labels.js';

export function worstCaseView(design: Design) {
  const measured = design.worstCaseMeasured ?? [];
  const table = worstCaseTable(design);
  const rows = table.map((row) => {
    const m = measured.find((x) => x.ruleId === row.ruleId && x.kind === row.kind);
    return {
      ruleId: row.ruleId,
      layer: row.layer === 'middleware' || row.layer === 'edge' || row.layer === 'outbound-client' ? layerName(row.layer) : row.layer,
      algorithm: row.algorithmLabel ?? algorithmName(row.algorithm),
      // a rate below one a period states a longer period (shownRate); a calendar period is kept
      stated: `${shownRate(row.stated, row.periodSeconds).periodSeconds === row.periodSeconds ? `${fmtNumber(row.stated)} per ${row.periodText}` : ratePer({ requests: row.stated, periodSeconds: row.periodSeconds })}${row.perLocation ? ` in each ${row.perLocation}` : ''}`,
      worstCase: `${fmtNumber(row.worstCase)}${row.perLocation ? ` per ${row.perLocation}` : ''}`,
      formula: row.formula,
      basis: row.basis,
      measured: m
        ? `${m.passed ? '' : 'FAILED: '}${fmtNumber(m.measured)} of at most ${fmtNumber(m.stated)} (${m.params}${m.scaling ? '; scaled' : ''})`
        : row.measurable
          ? 'not measured yet'
          : 'not run by verify',
    };
  });
  return {
    rows,
    /** Rules the gateway counts nowhere (no row), with why. */
    notEnforced: design.rules.filter((r) => r.notEnforced?.all).map((r) => ({ ruleId: r.id, text: r.notEnforced?.text ?? '' })),
    /** Whether any row carries a measurement (the column is shown only then). */
    hasMeasured: measured.length > 0,
    measurable: table.some((row) => row.measurable),
    /** What verify --write measures of this table, in words ("the fixed windows and GCRA buckets"). */
    measuredWhat: measuredWhat(table),
    /** The memory fallback's rows are measured too (with the store stopped). */
    fallbackMeasurable: table.some((row) => row.measurable && row.kind === 'memory-fallback'),
  };
}

/** The kinds of rows verify measures in this design's table, as a list in words. */
function measuredWhat(table: ReturnType<typeof worstCaseTable>): string {
  const measured = table.filter((row) => row.measurable && row.kind !== 'memory-fallback');
  const parts = [
    ...(measured.some((row) => row.kind === 'rule' && row.algorithm === 'fixed-window') ? ['fixed windows'] : []),
    ...(measured.some((row) => row.kind === 'rule' && luaScriptFor(row.algorithm) === 'gcra') ? ['GCRA buckets'] : []),
    ...(measured.some((row) => row.kind === 'hybrid') ? ['the local + store hybrid'] : []),
  ];
  if (parts.length === 0) return 'the rules it can run';
  const list = parts.length === 1 ? parts[0] : `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`;
  return parts[0] === 'the local + store hybrid' ? (list as string) : `the ${list}`;
}
