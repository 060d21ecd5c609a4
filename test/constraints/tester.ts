/**
 * A small table-driven tester for constraint modules (after ESLint's RuleTester): valid
 * designs must give no findings; invalid ones exactly the expected findings, in order.
 * Lives under test/ because it registers vitest blocks.
 */
import { describe, expect, it } from 'vitest';
import type { CodeFile } from '../../src/codegen/types.js';
import type { Design } from '../../src/design/model.js';
import { fillTemplate } from '../../src/constraints/define.js';
import type { ConstraintModule, FindingData } from '../../src/constraints/types.js';

export interface ExpectedFinding {
  messageId: string;
  ruleId?: string;
  /** Checked as a subset of the finding's data. */
  data?: FindingData;
}

export interface ConstraintTests {
  /** With `files`, the constraint also checks the generated files (the artefact checks). */
  valid: { name: string; design: Design; files?: readonly CodeFile[] }[];
  invalid: { name: string; design: Design; files?: readonly CodeFile[]; expect: ExpectedFinding[] }[];
}

export function runConstraintTests(module: ConstraintModule, tests: ConstraintTests): void {
  const { id, messages } = module.meta;

  describe(`constraint ${module.meta.number} ${id}`, () => {
    for (const { name, design, files } of tests.valid) {
      it(`passes: ${name}`, () => {
        expect(module.check(design, files)).toEqual([]);
      });
    }

    for (const { name, design, files, expect: expected } of tests.invalid) {
      it(`fails: ${name}`, () => {
        const findings = module.check(design, files);
        expect(findings.map((f) => ({ messageId: f.messageId, ruleId: f.ruleId }))).toEqual(
          expected.map((e) => ({ messageId: e.messageId, ruleId: e.ruleId })),
        );
        findings.forEach((finding, i) => {
          expect(finding.constraintId).toBe(id);
          const template = messages[finding.messageId];
          expect(template, `message ${finding.messageId}`).toBeTypeOf('string');
          expect(fillTemplate(template ?? '', finding.data), 'every placeholder is filled').not.toMatch(/\{\{/);
          const data = expected[i]?.data;
          if (data !== undefined) expect(finding.data).toMatchObject(data);
        });
      });
    }
  });
}
