/**
 * The constraint results as a SARIF 2.1.0 log, for code-scanning tools: one reporting descriptor
 * per constraint, one result per finding, each located where a reader would fix it. A finding
 * about a generated file points at that file; any other finding points at the answers field that
 * caused it (the hand-written rule, the endpoint, the plan, the provider, the setting); when no
 * field answers for it, at the top of the answers file, with a logical location naming the rule.
 */
import { findNodeAtLocation, type Node, parseTree } from 'jsonc-parser';
import type { CodeFile } from '../codegen/types.js';
import type { Design, MatrixRule } from '../design/model.js';
import { lineColumn } from '../io/text.js';
import { TOOL_VERSION } from '../version.js';
import { CONSTRAINTS, formatFinding } from './index.js';
import type { ConstraintResult, Finding } from './types.js';

const SARIF_SCHEMA_URI = 'https://json.schemastore.org/sarif-2.1.0.json';
/** The uriBaseId of generated files when the answers name no code folder. */
export const CODE_BASE_ID = 'RLDESIGN_CODE';

interface SarifOptions {
  /** The answers file: its URI as the log names it (relative to the working folder, or file://) and its text. */
  answers: { uri: string; text: string };
  /** The URI of the folder the generated files are written to, ending in "/"; absent: they are named relative to CODE_BASE_ID. */
  codeDirUri?: string;
}

type Segment = string | number;

interface Region {
  startLine: number;
  startColumn: number;
  endLine: number;
  endColumn: number;
}

interface PhysicalLocation {
  artifactLocation: { uri: string; uriBaseId?: string };
  region?: Region;
}

interface SarifLocation {
  physicalLocation: PhysicalLocation;
  logicalLocations?: { name: string; fullyQualifiedName: string; kind: string }[];
}

/** A result: a finding (kind fail, the default). */
interface SarifResult {
  ruleId: string;
  ruleIndex: number;
  level: 'error';
  message: { text: string };
  locations: SarifLocation[];
  relatedLocations?: (SarifLocation & { id: number; message: { text: string } })[];
  partialFingerprints: Record<string, string>;
  properties: { messageId?: string; matrixRuleId?: string };
}

/** A descriptor's `name`: the constraint id in UpperCamelCase, as SARIF viewers show rule names. */
function ruleName(id: string): string {
  return id
    .split('-')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');
}

function regionOf(text: string, offset: number, length: number): Region {
  const start = lineColumn(text, offset);
  const end = lineColumn(text, offset + length);
  return { startLine: start.line, startColumn: start.column, endLine: end.line, endColumn: end.column };
}

/**
 * The answers as a tree with offsets, tolerant of a broken file (validate only runs on a valid
 * one). Parsed on first use: a log whose findings all point at generated files, or that has none,
 * never needs it.
 */
class AnswersTree {
  #root: Node | undefined | null = null;
  constructor(readonly text: string) {}

  get root(): Node | undefined {
    if (this.#root === null) this.#root = parseTree(this.text, [], { allowTrailingComma: true, disallowComments: false });
    return this.#root;
  }

  /** The node at a path, or undefined. */
  node(path: readonly Segment[]): Node | undefined {
    const root = this.root;
    return root ? findNodeAtLocation(root, [...path]) : undefined;
  }

  /** The index of the entry of array `path` whose `key` is `value`. */
  indexWhere(path: readonly Segment[], key: string, value: string): number | undefined {
    const array = this.node(path);
    if (array?.type !== 'array') return undefined;
    const i = (array.children ?? []).findIndex((entry) => {
      const v = entry.type === 'object' ? findNodeAtLocation(entry, [key]) : undefined;
      return v?.type === 'string' && v.value === value;
    });
    return i < 0 ? undefined : i;
  }

  /** The index of the first entry of array `path` matching a predicate on its plain value. */
  indexOf(path: readonly Segment[], match: (entry: Record<string, unknown>) => boolean): number | undefined {
    const array = this.node(path);
    if (array?.type !== 'array') return undefined;
    const i = (array.children ?? []).findIndex((entry) => entry.type === 'object' && match(plain(entry)));
    return i < 0 ? undefined : i;
  }

  /** The region of the field at a path: from its key to the end of its value (an array entry: the entry). */
  region(path: readonly Segment[]): Region | undefined {
    const node = this.node(path);
    if (!node) return undefined;
    const target = node.parent?.type === 'property' ? node.parent : node;
    return regionOf(this.text, target.offset, target.length);
  }
}

function plain(node: Node): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const prop of node.children ?? []) {
    const [key, value] = prop.children ?? [];
    if (key?.type === 'string' && value) out[key.value as string] = value.value;
  }
  return out;
}

/** The property of a rules entry that a message is about, when the entry states it. */
const RULE_FIELD: Record<string, string> = {
  missingPrimitive: 'primitive',
  notAtomic: 'primitive',
  perInstanceState: 'primitive',
  noGateway: 'primitive',
  noStore: 'primitive',
  missingFailMode: 'failMode',
  failModeNotShipped: 'failMode',
  edgeFailModeNotStated: 'failMode',
  missingKey: 'key',
  missingTtl: 'ttlSeconds',
  ttlTooShort: 'ttlSeconds',
  ttlNeverApplied: 'ttlSeconds',
  unboundedCardinality: 'cardinalityBound',
  cardinalityNotStated: 'cardinalityBound',
  securityNotSilent: 'headers',
  headersNotFull: 'headers',
  edgeClaimsHeaders: 'headers',
  unexpectedSilent: 'headers',
  missingKillSwitch: 'killSwitch',
  burstNotApplicable: 'burst',
  perInstanceBucket: 'bucket',
  inProcessOutbound: 'primitive',
};

/** Design fields that have no answers field of their own: the answers settings that shape them. */
const SETTING_PATHS: Record<string, Segment[][]> = {
  'complete-rules/emptyMatrix': [['endpoints'], ['rules']],
  'atomic-check/primitiveNotNamed': [['stack', 'store']],
  'response-contract/retryAfterMissing': [['headers']],
  'response-contract/noConvention': [['headers', 'convention'], ['headers']],
  'response-contract/noHeaders': [['headers', 'convention'], ['headers']],
  'response-contract/missingHeader': [['headers', 'convention'], ['headers']],
  'response-contract/mixedConventions': [['headers', 'convention'], ['headers']],
  'shadow-rollout/notShadowFirst': [['rollout', 'shadowMode'], ['rollout']],
  'shadow-rollout/noShadowPeriod': [['rollout', 'shadowDays'], ['rollout']],
  'shadow-rollout/noSteps': [['rollout']],
  'shadow-rollout/firstStepNotShadow': [['rollout', 'shadowMode'], ['rollout']],
  'quota-billing-separation/missingQuotaDesign': [['plans'], ['quotas']],
  'quota-billing-separation/billingFromLimiter': [['quotas', 'billingSource'], ['quotas']],
  'quota-billing-separation/separationNotStated': [['quotas']],
  'fail-mode/missingMetric': [['failure']],
  'fail-mode/metricNotCounter': [['failure']],
  'fail-mode/missingAlert': [['failure']],
};

/** The answers paths a finding may be located at, most precise first. */
function candidatePaths(tree: AnswersTree, design: Design, finding: Finding): Segment[][] {
  const out: Segment[][] = [];
  const { data, ruleId } = finding;
  const field = RULE_FIELD[finding.messageId] ?? (typeof data.field === 'string' ? data.field : undefined);
  const endpointAt = (name: string): void => {
    const i = tree.indexWhere(['endpoints'], 'name', name);
    if (i !== undefined) out.push(['endpoints', i]);
  };
  const providerAt = (name: string): void => {
    const i = tree.indexWhere(['outbound'], 'name', name);
    if (i === undefined) return;
    if (field) out.push(['outbound', i, field]);
    out.push(['outbound', i]);
  };
  // what the message names: an auth endpoint, a provider
  if (typeof data.endpoint === 'string') endpointAt(data.endpoint);
  if (typeof data.provider === 'string') providerAt(data.provider);
  if (ruleId !== undefined) {
    // a hand-written rules entry with the rule's id (adds or overrides the row)
    const i = tree.indexWhere(['rules'], 'id', ruleId);
    if (i !== undefined) {
      if (field) out.push(['rules', i, field]);
      out.push(['rules', i, 'id']);
    }
    const rule = (Array.isArray(design?.rules) ? design.rules : []).find((r) => r?.id === ruleId);
    if (rule) out.push(...generatedRulePaths(tree, design, rule));
  }
  out.push(...(SETTING_PATHS[`${finding.constraintId}/${finding.messageId}`] ?? []));
  return out;
}

/** Where a generated row comes from: its provider, plan, endpoints, endpoint class, or the inputs its numbers rest on. */
function generatedRulePaths(tree: AnswersTree, design: Design, rule: MatrixRule): Segment[][] {
  const out: Segment[][] = [];
  const provider = design.outbound?.providers?.find((p) => p.ruleId === rule.id);
  if (provider) {
    const i = tree.indexWhere(['outbound'], 'name', provider.name);
    if (i !== undefined) out.push(['outbound', i]);
  }
  if (typeof rule.plan === 'string') {
    const i = tree.indexWhere(['plans'], 'name', rule.plan);
    if (i !== undefined) out.push(['plans', i]);
  }
  for (const name of Array.isArray(rule.endpoints) ? rule.endpoints : []) {
    const i = tree.indexWhere(['endpoints'], 'name', name);
    if (i !== undefined) out.push(['endpoints', i]);
  }
  if (typeof rule.endpointClass === 'string' && rule.endpointClass !== 'all') {
    const i = tree.indexOf(['endpoints'], (e) => e.class === rule.endpointClass);
    if (i !== undefined) out.push(['endpoints', i]);
  }
  for (const input of Array.isArray(rule.inputs) ? rule.inputs : []) out.push(input.split('.'));
  return out;
}

/** The line of a generated file that names what the finding is about (its rule, script, provider, alert), or the first. */
function lineInFile(file: CodeFile, finding: Finding): Region {
  const needles = [finding.ruleId, finding.data.script, finding.data.provider, finding.data.alert, finding.data.metric, finding.data.flag]
    .filter((n): n is string => typeof n === 'string' && n.length > 0)
    .flatMap((n) => [JSON.stringify(n), n]);
  for (const needle of needles) {
    const at = file.content.indexOf(needle);
    if (at >= 0) return regionOf(file.content, at, needle.length);
  }
  const firstLine = file.content.split('\n', 1)[0] ?? '';
  return { startLine: 1, startColumn: 1, endLine: 1, endColumn: firstLine.length + 1 };
}

/** The generated file a finding names (`data.file`), with lua/ scripts named by their bare file name. */
function generatedFile(files: readonly CodeFile[], name: string): { path: string; file?: CodeFile } {
  const direct = files.find((f) => f.path === name);
  if (direct) return { path: name, file: direct };
  const lua = files.find((f) => f.path === `lua/${name}`);
  if (lua) return { path: lua.path, file: lua };
  return { path: name };
}

function encodePath(p: string): string {
  return p
    .split('/')
    .map((s) => encodeURIComponent(s))
    .join('/');
}

export function toSarif(design: Design, results: readonly ConstraintResult[], files: readonly CodeFile[], opts: SarifOptions) {
  const tree = new AnswersTree(opts.answers.text);
  const answersArtifact = { uri: opts.answers.uri };
  const codeArtifact = (p: string): { uri: string; uriBaseId?: string } =>
    opts.codeDirUri !== undefined ? { uri: opts.codeDirUri + encodePath(p) } : { uri: encodePath(p), uriBaseId: CODE_BASE_ID };
  const usesCodeBase = { value: false };

  /** The top of the answers file, with a logical location naming what the result is about. */
  const topOfAnswers = (name: string, fullyQualifiedName: string): SarifLocation => ({
    physicalLocation: { artifactLocation: answersArtifact, region: { startLine: 1, startColumn: 1, endLine: 1, endColumn: 2 } },
    logicalLocations: [{ name, fullyQualifiedName, kind: 'object' }],
  });

  const answersLocation = (finding: Finding): SarifLocation => {
    for (const path of candidatePaths(tree, design, finding)) {
      const region = tree.region(path);
      if (region) return { physicalLocation: { artifactLocation: answersArtifact, region } };
    }
    return finding.ruleId !== undefined
      ? topOfAnswers(finding.ruleId, `rules/${finding.ruleId}`)
      : topOfAnswers(finding.constraintId, `constraints/${finding.constraintId}`);
  };

  const sarifResults = results.flatMap((r) =>
    r.findings.map((finding): SarifResult => {
      const fileName = typeof finding.data.file === 'string' ? finding.data.file : undefined;
      let locations: SarifLocation[];
      let relatedLocations: (SarifLocation & { id: number; message: { text: string } })[] | undefined;
      if (fileName !== undefined) {
        const { path, file } = generatedFile(files, fileName);
        if (opts.codeDirUri === undefined) usesCodeBase.value = true;
        locations = [
          { physicalLocation: { artifactLocation: codeArtifact(path), ...(file ? { region: lineInFile(file, finding) } : {}) } },
        ];
        if (finding.ruleId !== undefined) {
          const answers = answersLocation(finding);
          relatedLocations = [{ id: 1, message: { text: `The answers behind rule ${finding.ruleId}` }, ...answers }];
        }
      } else {
        locations = [answersLocation(finding)];
      }
      return {
        ruleId: r.id,
        ruleIndex: CONSTRAINTS.findIndex((c) => c.meta.id === r.id),
        level: 'error',
        message: { text: formatFinding(finding) },
        locations,
        ...(relatedLocations ? { relatedLocations } : {}),
        partialFingerprints: {
          'rlDesignFinding/v1': [r.id, finding.messageId, finding.ruleId ?? '', fileName ?? ''].join('|'),
        },
        properties: {
          messageId: finding.messageId,
          ...(finding.ruleId !== undefined ? { matrixRuleId: finding.ruleId } : {}),
        },
      };
    }),
  );

  // A constraint that passes for a reason the title does not give (its pass note, as validate's
  // text and --json print it): a tool execution notification of level "note" tied to the
  // constraint, not a result. Code scanning turns every result into an alert, a result of kind
  // "pass" included, so a pass there would stand as an open alert on every run.
  const passNotes = results
    .filter((r) => r.passed && r.note !== undefined)
    .map((r) => ({
      level: 'note' as const,
      message: { text: `Passes: ${r.note}.` },
      associatedRule: { id: r.id, index: CONSTRAINTS.findIndex((c) => c.meta.id === r.id) },
    }));

  return {
    $schema: SARIF_SCHEMA_URI,
    version: '2.1.0' as const,
    runs: [
      {
        tool: {
          driver: {
            name: 'rl-design',
            version: TOOL_VERSION,
            semanticVersion: TOOL_VERSION,
            rules: CONSTRAINTS.map(({ meta }) => ({
              id: meta.id,
              name: ruleName(meta.id),
              shortDescription: { text: `${meta.number}. ${meta.title}` },
              fullDescription: { text: meta.description },
              defaultConfiguration: { level: 'error' as const },
              properties: { constraintNumber: meta.number, applicable: results.find((x) => x.id === meta.id)?.applicable ?? true },
            })),
          },
        },
        ...(usesCodeBase.value
          ? {
              originalUriBaseIds: {
                [CODE_BASE_ID]: {
                  description: { text: 'The folder the generated code is written to (output.codeDir or generate --code-dir).' },
                },
              },
            }
          : {}),
        invocations: [{ executionSuccessful: true, ...(passNotes.length > 0 ? { toolExecutionNotifications: passNotes } : {}) }],
        results: sarifResults,
        columnKind: 'utf16CodeUnits' as const,
      },
    ],
  };
}
