/**
 * The document's sections, in order. Each is one
 * handlebars template in templates/markdown/sections/ fed by a view model; a section whose
 * data is absent (quotas, outbound) is left out and the remaining ones are numbered
 * 1..N without gaps, identically in every layout.
 */
import type { Design } from '../../design/model.js';
import { Slugger } from '../../escape/markup.js';
import type { SectionLinkResolver } from '../helpers.js';
import { normalizeMarkdown } from '../normalize.js';
import { template } from '../templates.js';
import type { RenderInput } from '../types.js';
import {
  algorithmsView,
  constraintsView,
  contractView,
  enforcementView,
  matrixView,
  monitoringView,
  outboundView,
  quotasView,
  rolloutView,
  scenariosView,
  scopeView,
  sectionSummary,
} from './views.js';

export type SectionId =
  | 'scope'
  | 'matrix'
  | 'algorithms'
  | 'enforcement'
  | 'contract'
  | 'quotas'
  | 'outbound'
  | 'monitoring'
  | 'rollout'
  | 'scenarios'
  | 'constraints';

interface SectionDef {
  id: SectionId;
  title: string;
  /** Lower-case name used to title a page that groups sections ("scope and limit matrix"). */
  short: string;
  template: string;
  present: (design: Design) => boolean;
  /** The section's view model: its type is the view function's own (each returns a plain object). */
  view: (input: RenderInput) => object;
}

const always = (): boolean => true;

export const SECTIONS: readonly SectionDef[] = [
  { id: 'scope', title: 'Scope and context', short: 'scope', template: '01-scope', present: always, view: scopeView },
  { id: 'matrix', title: 'Limit matrix', short: 'limit matrix', template: '02-matrix', present: always, view: matrixView },
  { id: 'algorithms', title: 'Algorithm decisions', short: 'algorithms', template: '03-algorithms', present: always, view: algorithmsView },
  { id: 'enforcement', title: 'Enforcement', short: 'enforcement', template: '04-enforcement', present: always, view: enforcementView },
  { id: 'contract', title: 'Response contract', short: 'response contract', template: '05-contract', present: always, view: contractView },
  { id: 'quotas', title: 'Quotas', short: 'quotas', template: '06-quotas', present: (d) => d.quotas !== undefined, view: quotasView },
  {
    id: 'outbound',
    title: 'Outbound limits',
    short: 'outbound',
    template: '07-outbound',
    present: (d) => d.outbound !== undefined,
    view: outboundView,
  },
  { id: 'monitoring', title: 'Monitoring', short: 'monitoring', template: '08-monitoring', present: always, view: monitoringView },
  { id: 'rollout', title: 'Rollout', short: 'rollout', template: '09-rollout', present: always, view: rolloutView },
  { id: 'scenarios', title: 'Test scenarios', short: 'tests', template: '10-scenarios', present: always, view: scenariosView },
  {
    id: 'constraints',
    title: 'Constraint check',
    short: 'constraints',
    template: '11-constraints',
    present: always,
    view: constraintsView,
  },
];

/** A section in this document: its number, heading and anchor are fixed before rendering. */
export interface PlannedSection {
  id: SectionId;
  num: number;
  title: string;
  short: string;
  /** The heading text, e.g. "2. Limit matrix". */
  heading: string;
  /** GitHub anchor of the heading, e.g. "2-limit-matrix". */
  anchor: string;
  summary: string;
}

export interface RenderedSection extends PlannedSection {
  markdown: string;
}

/** Which sections this design has, numbered without gaps. */
export function planSections(input: RenderInput): PlannedSection[] {
  return SECTIONS.filter((s) => s.present(input.design)).map((s, i) => {
    const num = i + 1;
    const heading = `${num}. ${s.title}`;
    return {
      id: s.id,
      num,
      title: s.title,
      short: s.short,
      heading,
      anchor: new Slugger().slug(heading),
      summary: sectionSummary(s.id, input.design, input),
    };
  });
}

/** Renders every planned section; `links` resolves cross-references for the layout. */
export function renderSections(input: RenderInput, plan: PlannedSection[], links: SectionLinkResolver): RenderedSection[] {
  return plan.map((p) => {
    const def = SECTIONS.find((s) => s.id === p.id) as SectionDef;
    const markdown = normalizeMarkdown(template(`sections/${def.template}.md.hbs`)({ ...def.view(input), num: p.num }, links));
    return { ...p, markdown };
  });
}
