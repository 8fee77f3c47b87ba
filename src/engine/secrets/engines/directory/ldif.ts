/**
 * LDIF change records (RFC 2849), as the `ldap` engine's dynamic roles write them: `add` (also a
 * content record without `changetype`), `modify` with `add`/`replace`/`delete` parts separated by
 * `-`, and `delete`. Values may be base64 (`attr:: ...`); lines may be folded (a continuation line
 * starts with one space); `#` lines are comments; a leading `version: 1` is skipped. No npm package
 * of the field parses LDIF change records, so this small reader is ours; `ldapts` applies them.
 */

export type LdifValue = string | Buffer;

export interface LdifAttribute {
  readonly type: string;
  readonly values: LdifValue[];
}

export type LdifRecord =
  | { readonly kind: 'add'; readonly dn: string; readonly attributes: LdifAttribute[] }
  | { readonly kind: 'delete'; readonly dn: string }
  | {
    readonly kind: 'modify';
    readonly dn: string;
    readonly changes: { readonly operation: 'add' | 'replace' | 'delete'; readonly attribute: LdifAttribute }[];
  };

interface Line {
  readonly attr: string;
  readonly value: LdifValue;
  /** The line number where it starts (1-based), for messages. */
  readonly at: number;
}

/** Unfolds lines and splits records at blank lines; `-` stays a line of its own. */
function records(text: string): Line[][] {
  const raw = text.replace(/\r\n/g, '\n').split('\n');
  const out: Line[][] = [];
  let current: Line[] = [];
  let pending: { text: string; at: number } | undefined;
  const flush = () => {
    if (!pending) return;
    current.push(parseLine(pending.text, pending.at));
    pending = undefined;
  };
  raw.forEach((line, i) => {
    if (line.startsWith(' ') && pending) {
      pending.text += line.slice(1);
      return;
    }
    flush();
    if (line.trim() === '') {
      if (current.length) out.push(current);
      current = [];
      return;
    }
    if (line.startsWith('#')) return;
    if (line === '-') {
      current.push({ attr: '-', value: '', at: i + 1 });
      return;
    }
    pending = { text: line, at: i + 1 };
  });
  flush();
  if (current.length) out.push(current);
  return out;
}

function parseLine(text: string, at: number): Line {
  const colon = text.indexOf(':');
  if (colon <= 0) throw new Error(`line ${at}: expected "attribute: value"`);
  const attr = text.slice(0, colon).trim();
  if (!/^[A-Za-z0-9][A-Za-z0-9;.-]*$/.test(attr)) throw new Error(`line ${at}: "${attr}" is not an attribute name`);
  const rest = text.slice(colon + 1);
  if (rest.startsWith(':')) {
    const b64 = rest.slice(1).trim();
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) throw new Error(`line ${at}: the base64 value of ${attr} is not base64`);
    return { attr, value: Buffer.from(b64, 'base64'), at };
  }
  if (rest.startsWith('<')) throw new Error(`line ${at}: values from URLs (${attr}:<) are not supported`);
  return { attr, value: rest.replace(/^ +/, ''), at };
}

const text = (v: LdifValue) => (typeof v === 'string' ? v : v.toString('utf8'));

function parseRecord(lines: Line[]): LdifRecord {
  const [first, ...rest] = lines;
  if (first.attr.toLowerCase() !== 'dn') throw new Error(`line ${first.at}: a record starts with "dn:"`);
  const dn = text(first.value).trim();
  if (!dn) throw new Error(`line ${first.at}: the dn is empty`);
  let kind = 'add';
  let body = rest;
  if (rest[0]?.attr.toLowerCase() === 'changetype') {
    kind = text(rest[0].value).trim().toLowerCase();
    body = rest.slice(1);
  }
  if (kind === 'add') {
    const byType = new Map<string, LdifAttribute>();
    for (const l of body) {
      if (l.attr === '-') throw new Error(`line ${l.at}: "-" only separates the parts of a modify record`);
      const key = l.attr.toLowerCase();
      if (!byType.has(key)) byType.set(key, { type: l.attr, values: [] });
      byType.get(key)!.values.push(l.value);
    }
    if (byType.size === 0) throw new Error(`line ${first.at}: the add record of "${dn}" has no attributes`);
    return { kind: 'add', dn, attributes: [...byType.values()] };
  }
  if (kind === 'delete') {
    if (body.length) throw new Error(`line ${body[0].at}: a delete record has no attributes`);
    return { kind: 'delete', dn };
  }
  if (kind === 'modify') {
    const changes: { operation: 'add' | 'replace' | 'delete'; attribute: LdifAttribute }[] = [];
    let i = 0;
    while (i < body.length) {
      const head = body[i];
      const operation = head.attr.toLowerCase();
      if (operation !== 'add' && operation !== 'replace' && operation !== 'delete') {
        throw new Error(`line ${head.at}: a modify part starts with add:, replace: or delete:, not "${head.attr}:"`);
      }
      const type = text(head.value).trim();
      const values: LdifValue[] = [];
      for (i++; i < body.length && body[i].attr !== '-'; i++) {
        if (body[i].attr.toLowerCase() !== type.toLowerCase()) throw new Error(`line ${body[i].at}: expected ${type} values in this part, not ${body[i].attr}`);
        values.push(body[i].value);
      }
      if (i < body.length) i++; // the "-"
      changes.push({ operation, attribute: { type, values } });
    }
    if (changes.length === 0) throw new Error(`line ${first.at}: the modify record of "${dn}" changes nothing`);
    return { kind: 'modify', dn, changes };
  }
  throw new Error(`line ${rest[0].at}: changetype "${kind}" is not supported (add, modify or delete)`);
}

/** Parses LDIF text into change records; throws a message with the line number. */
export function parseLdif(input: string): LdifRecord[] {
  const recs = records(input);
  if (recs.length && recs[0][0].attr.toLowerCase() === 'version') {
    recs[0] = recs[0].slice(1);
    if (recs[0].length === 0) recs.shift();
  }
  return recs.map(parseRecord);
}
