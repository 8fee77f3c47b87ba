import { useState } from 'preact/hooks';
import { ApiClient } from '../../shared/api';
import { CopyText, ErrorMessage, Facts, Field, Notice, Select } from '../../shared/components';
import { page, type PageProps } from '../../shared/console';
import { useAction } from '../../shared/hooks';
import { html } from '../../shared/html';
import { Denied, isDenied, readOrDenied } from '../api';
import { ConfirmButton, PermissionDenied, splitList } from '../components';
import { mountUrl } from './engine-mounts';
import { readTransformation, Transformation, transformHref } from './transform-transformation';

interface RoleData {
  readonly role: { readonly transformations: readonly string[] } | Denied;
  /** The role's transformations as far as the token may read them (their type decides the form's fields). */
  readonly transformations: Record<string, Transformation | undefined>;
}

/** `/transform/:mount/roles/:role`: the role (its transformations, edit, delete) and encode/decode with it. */
export const transformRolePage = page({
  path: '/transform/:mount/roles/:role',
  title: ({ params }) => `Transform role ${params.role}`,
  signedIn: true,
  load: async ({ api, params }): Promise<RoleData> => {
    const role = await readOrDenied(api.get<{ data: { transformations: string[] } }>(mountUrl(params.mount, 'role', params.role)).then((r) => r.data));
    const names = isDenied(role) ? [] : role.transformations;
    // A token that may encode need not read transformations: the form then asks for the tweak anyway.
    const read = await Promise.all(names.map((n) => readTransformation(api, params.mount, n).catch(() => undefined)));
    return { role, transformations: Object.fromEntries(names.map((n, i) => [n, read[i]])) };
  },
  view: (props: PageProps<RoleData>) => {
    const { data, params } = props;
    const { mount, role } = params;
    const r = data.role;
    return html`<section>
      <p><a href=${props.href('/transform')}>Transform</a> / <a href=${props.href(transformHref(mount))}>${mount}/</a></p>
      <h1>Transform role ${role}</h1>
      ${isDenied(r)
        ? html`<${PermissionDenied} what=${`reading the role ${role}`} denied=${r} />`
        : html`<div class="columns">
            <div class="card">
              <h2>Encode and decode</h2>
              ${r.transformations.length === 0
                ? html`<p>The role has no transformations yet.</p>`
                : html`<${Codec} key=${`${mount}/${role}`} api=${props.api} mount=${mount} role=${role} transformations=${data.transformations} />`}
            </div>
            <div class="card">
              <h2>Role</h2>
              <${Facts}
                items=${[
                  [
                    'Transformations',
                    r.transformations.length === 0
                      ? 'none'
                      : r.transformations.map((t, i) => html`${i > 0 ? ', ' : ''}<a href=${props.href(transformHref(mount, 'transformations', t))}>${t}</a>`),
                  ],
                ]}
              />
              <${EditRole} key=${`${mount}/${role}`} api=${props.api} mount=${mount} role=${role} current=${r.transformations} onSaved=${props.reload} />
              <div class="actions">
                <${ConfirmButton}
                  label="Delete role"
                  confirmLabel="Delete"
                  question=${`Delete the role ${role}? Values it encoded stay decodable through another role.`}
                  onConfirm=${async () => {
                    await props.api.delete(mountUrl(mount, 'role', role));
                    props.navigate(transformHref(mount));
                  }}
                />
              </div>
            </div>
          </div>`}
    </section>`;
  },
});

interface EditRoleProps {
  readonly api: ApiClient;
  readonly mount: string;
  readonly role: string;
  readonly current: readonly string[];
  readonly onSaved: () => void;
}

function EditRole({ api, mount, role, current, onSaved }: EditRoleProps) {
  const [names, setNames] = useState(current.join(', '));
  const [saved, setSaved] = useState(false);
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    setSaved(false);
    void action.run(async () => {
      await api.post(mountUrl(mount, 'role', role), { transformations: splitList(names) });
      setSaved(true);
      onSaved();
    });
  };
  return html`<form onSubmit=${submit} aria-label="Edit role">
    <${Field} label="Role transformations" name="transformations" value=${names} onInput=${setNames} hint="Comma-separated transformation names." />
    <${ErrorMessage} messages=${action.error} />
    ${saved && html`<${Notice}>Saved role ${role}.<//>`}
    <button type="submit" disabled=${action.busy}>Save role</button>
  </form>`;
}

type Op = 'encode' | 'decode' | 'validate';

/** What encode, decode and validate answer for one value. */
interface OpResult {
  readonly encoded_value?: string;
  readonly decoded_value?: string;
  readonly tweak?: string;
  readonly valid?: boolean;
}

interface Result {
  readonly op: Op;
  readonly value?: string;
  readonly tweak?: string;
  readonly valid?: boolean;
}

/**
 * One form for the three operations: Enter (or "Encode") encodes; "Decode" and, for tokenization,
 * "Validate" send the same fields to their endpoints. The tweak is asked when the transformation's
 * source needs it (or when its type is unknown to the token).
 */
interface CodecProps {
  readonly api: ApiClient;
  readonly mount: string;
  readonly role: string;
  readonly transformations: Record<string, Transformation | undefined>;
}

function Codec({ api, mount, role, transformations }: CodecProps) {
  const names = Object.keys(transformations);
  const [name, setName] = useState(names[0]);
  const [value, setValue] = useState('');
  const [tweak, setTweak] = useState('');
  const [ttl, setTtl] = useState('');
  const [result, setResult] = useState<Result | undefined>(undefined);
  const action = useAction();
  const t = transformations[name];
  const needsTweak = !t || (t.type === 'fpe' && t.tweak_source !== 'internal');
  const tokenization = t?.type === 'tokenization';
  const run = (op: Op) => {
    setResult(undefined);
    void action.run(async () => {
      const res = await api.post<{ data: OpResult }>(mountUrl(mount, op, role), {
        value,
        transformation: name,
        tweak: needsTweak && tweak.trim() ? tweak.trim() : undefined,
        ttl: op === 'encode' && tokenization && ttl.trim() ? ttl.trim() : undefined,
      });
      const d = res.data;
      setResult({ op, value: d.encoded_value ?? d.decoded_value, tweak: d.tweak, valid: d.valid });
    });
  };
  const submit = (e: Event) => {
    e.preventDefault();
    run('encode');
  };
  return html`<form onSubmit=${submit} aria-label="Encode and decode">
    <${Select} label="Transformation" name="transformation" value=${name} options=${names.map((n) => [n, t && n === name ? `${n} (${t.type})` : n] as const)} onInput=${setName} />
    <${Field} label="Value" name="value" required value=${value} onInput=${setValue} autocomplete="off" hint="The value to encode, or an encoded value (a token) to decode or validate." />
    ${needsTweak &&
    html`<${Field}
      label="Tweak"
      name="tweak"
      value=${tweak}
      onInput=${setTweak}
      autocomplete="off"
      hint=${t?.tweak_source === 'generated' ? 'Only to decode: the tweak the encode returned.' : '7 bytes, base64 (e.g. dHdlYWswNw==); the same to decode.'}
    />`}
    ${tokenization && html`<${Field} label="Token TTL" name="ttl" value=${ttl} onInput=${setTtl} hint="Empty: the transformation's maximum (or no expiry)." />`}
    <${ErrorMessage} messages=${action.error} />
    <div class="actions">
      <button type="submit" disabled=${action.busy}>Encode</button>
      ${t?.type !== 'masking' && html`<button type="button" class="secondary" disabled=${action.busy} onClick=${() => run('decode')}>Decode</button>`}
      ${tokenization && html`<button type="button" class="secondary" disabled=${action.busy} onClick=${() => run('validate')}>Validate</button>`}
    </div>
    <div aria-live="polite">
      ${result?.op === 'encode' && result.value !== undefined && html`<${CopyText} label="Encoded value" text=${result.value} />`}
      ${result?.op === 'encode' && result.tweak && html`<${CopyText} label="Generated tweak" text=${result.tweak} />`}
      ${result?.op === 'decode' && result.value !== undefined && html`<${CopyText} label="Decoded value" text=${result.value} />`}
      ${result?.op === 'validate' &&
      html`<p role="status">
        ${result.valid ? html`<span class="badge ok">valid</span> The token is known and not expired.` : html`<span class="badge danger">invalid</span> The token is unknown or expired.`}
      </p>`}
    </div>
  </form>`;
}
