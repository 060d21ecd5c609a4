/**
 * Defensive readers for the checks: a design may be partial or hand-edited, so no field
 * is trusted to have the type the model promises. None of these throw.
 */
import type { Design, MatrixRule, Scope } from '../design/model.js';

/** The object entries of a list (anything else, or a non-list, is dropped). */
export function objects<T extends object>(value: readonly T[] | null | undefined): T[] {
  return Array.isArray(value) ? value.filter((v): v is T => typeof v === 'object' && v !== null) : [];
}

/** The string entries of a list (anything else, or a non-list, is dropped). */
export function strings(value: readonly string[] | null | undefined): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

export function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.trim().length > 0;
}

export function isPositiveNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0;
}

/** The matrix rules of a design that are objects at all. */
export function rulesOf(design: Design | null | undefined): MatrixRule[] {
  return objects(design?.rules);
}

/** A rule id usable in a finding: the rule's own id, or undefined when it has none. */
export function ruleIdOf(rule: MatrixRule): string | undefined {
  return isNonEmptyString(rule.id) ? rule.id : undefined;
}

/** More than one instance shares the limits: per-process state is not shared state. */
export function isScaledOut(scope: Scope | null | undefined): boolean {
  return scope?.topology === 'horizontal' || (isPositiveNumber(scope?.instances) && scope.instances > 1);
}

/** The instance count for a message: the number, or "several" when horizontal without one. */
export function instancesText(instances: unknown): number | string {
  return isPositiveNumber(instances) && instances > 1 ? instances : 'several';
}

/** Brute-force limits (login, signup, reset): silent headers, both keys. */
export function isSecurityRule(rule: MatrixRule): boolean {
  return rule.tier === 'security' || rule.endpointClass === 'auth';
}

/** A short printable form of an unexpected value, for finding data. */
export function show(value: unknown): string {
  let text: string;
  try {
    text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  } catch {
    text = '(unprintable value)';
  }
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}
