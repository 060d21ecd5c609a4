/** Shared inputs for the renderer tests: the example designs and a hostile one. */
import { readFileSync } from 'node:fs';
import { Answers } from '../../src/answers/schema.js';
import { buildDesign } from '../../src/design/build.js';
import { checkDesign } from '../../src/constraints/index.js';
import type { RenderInput } from '../../src/render/types.js';

export const DATE = '2025-01-01';
export const EXAMPLES = ['saas-platform', 'consumer-auth', 'minimal-generic'] as const;

export function answersOf(name: string): unknown {
  return JSON.parse(readFileSync(new URL(`../../examples/${name}.answers.json`, import.meta.url), 'utf8'));
}

export function inputFromAnswers(raw: unknown): RenderInput {
  const design = buildDesign(Answers.parse(raw), { date: DATE });
  return { design, checks: checkDesign(design) };
}

export function exampleInput(name: string): RenderInput {
  return inputFromAnswers(answersOf(name));
}

/** Every kind of string that has broken a Markdown, HTML, Mermaid or template output. */
export const HOSTILE = [
  'pipe | in <script>alert(1)</script> name',
  'back`tick``s ```fence',
  'new\nline\r\nand # heading\n- list\n1. ordered',
  ']] [link](javascript:alert(1)) ![img](x) <!-- -->',
  '{{handlebars}} {{{raw}}} $x$ $$math$$',
  'quotes "double" \'single\' & &amp; entity',
  '*emph* _under_ ~~strike~~ \\ backslash',
  '--> arrow; %% comment #35; <br/>',
];

/** The SaaS example with a hostile string in every user-supplied name and route. */
export function hostileAnswers(): Record<string, unknown> {
  const answers = answersOf('saas-platform') as Record<string, any>;
  const h = (i: number): string => HOSTILE[i % HOSTILE.length] as string;
  answers.project = { name: `Acme ${h(0)} ${h(4)}`, description: `Described with ${h(2)} and ${h(3)} and ${h(5)}` };
  answers.endpoints = answers.endpoints.map((e: Record<string, unknown>, i: number) => ({
    ...e,
    name: `${e.name} ${h(i)}`,
    route: `${e.route as string}/${h(i + 1)}`,
  }));
  answers.plans = answers.plans.map((p: Record<string, unknown>, i: number) => ({ ...p, name: `${p.name} ${h(i + 3)}` }));
  answers.outbound = answers.outbound.map((p: Record<string, unknown>, i: number) => ({ ...p, name: `${p.name} ${h(i + 5)}` }));
  answers.traffic.burstSources = [h(4), h(6)];
  answers.rules = [
    {
      id: 'hand-written-hostile',
      description: h(3),
      endpointClass: 'read',
      identity: 'user',
      algorithm: 'token-bucket',
      primitive: 'redis-lua',
      key: `rl:{u:<user>}:${h(1)}|${h(0)}`,
      rate: { requests: 10, per: 'second' },
      burst: 20,
      cost: 1,
      failMode: 'open',
      layer: 'middleware',
      ttlSeconds: 10,
      cardinalityBound: 100,
      rationale: h(7),
    },
  ];
  return answers;
}
