/** The view of the worst-case table (a subsection of the algorithm decisions). */
import type { Design } from '../../design/model.js';
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
    /** The memory fallback's rows are measured too (with the store stopped). */
    fallbackMeasurable: table.some((row) => row.measurable && row.kind === 'memory-fallback'),
  };
}
