import { IDENTITY_NAME, POLICY_NAME, ROLE_NAME } from '../route';
import type { SelectableNames, Variables } from './selector';

export const BIND_TYPES = ['service', 'node', 'role', 'policy'] as const;
export type BindType = (typeof BIND_TYPES)[number];

export class BindNameError extends Error {}

/**
 * A BindName: plain text or a template with `${value.name}` interpolations over the identity's
 * values. An unknown variable is an error, never an empty string.
 */
export function renderBindName(template: string, vars: Variables): string {
  return template.replace(/\$\{([^}]*)\}/g, (_all, expression: string) => {
    const name = expression.trim();
    const field = vars.fields?.[name];
    if (field !== undefined) return field;
    const m = /^value\.([A-Za-z0-9_.-]+)$/.exec(name) ?? /^value\["([^"]+)"\]$/.exec(name);
    if (!m) throw new BindNameError(`unknown variable accessed: ${name}`);
    const value = vars.values[m[1]];
    if (value === undefined) throw new BindNameError(`unknown variable accessed: ${name}`);
    return value;
  });
}

/** Whether a computed name is valid for its bind type. */
export function isValidBindName(type: BindType, name: string): boolean {
  return type === 'role' ? ROLE_NAME.test(name) : type === 'policy' ? POLICY_NAME.test(name) : IDENTITY_NAME.test(name);
}

/** Checks a BindName at rule creation: every variable is known and a rendered name is valid. */
export function validateBindName(type: BindType, template: string, names: SelectableNames): void {
  if (template.includes('${') && !/\$\{[^}]*\}/.test(template)) throw new BindNameError('unterminated "${"');
  const fake = (list: readonly string[] = []) => Object.fromEntries(list.map((v) => [v, 'fake']));
  const placeholder: Variables = { values: fake(names.values), lists: {}, fields: fake(names.fields) };
  const rendered = renderBindName(template, placeholder);
  if (!isValidBindName(type, rendered)) {
    throw new BindNameError(
      type === 'role' || type === 'policy'
        ? `computed name ${JSON.stringify(rendered)} is not a valid ${type} name: use letters, digits, '-' and '_'`
        : `computed name ${JSON.stringify(rendered)} is not a valid ${type} identity name: use lowercase letters, digits, '-' and '_'`,
    );
  }
}
