import { useState } from 'preact/hooks';
import { ApiClient } from '../../shared/api';
import { ErrorMessage, Facts, Field, Notice, Select } from '../../shared/components';
import { page, type PageProps } from '../../shared/console';
import { namedSubmit, useAction } from '../../shared/hooks';
import { html } from '../../shared/html';
import { Denied, isDenied, readOrDenied } from '../api';
import { ConfirmButton, formatTtl, PermissionDenied, splitList, ttlField } from '../components';
import { mountUrl } from './engine-mounts';
import { readTemplates } from './transform-objects';

export const TRANSFORMATION_TYPES: readonly (readonly [string, string])[] = [
  ['fpe', 'Format-preserving encryption (FPE)'],
  ['masking', 'Masking'],
  ['tokenization', 'Tokenization'],
];

const TWEAK_SOURCES: readonly (readonly [string, string])[] = [
  ['supplied', 'Supplied with each value'],
  ['generated', 'Generated at encode (needed to decode)'],
  ['internal', 'Internal (kept with the transformation)'],
];

/** A transformation as `transformation/:name` reads it (never its key). */
export interface Transformation {
  readonly type: 'fpe' | 'masking' | 'tokenization';
  readonly templates: readonly string[];
  readonly allowed_roles: readonly string[];
  readonly tweak_source?: string;
  readonly masking_character?: string;
  readonly mapping_mode?: string;
  readonly max_ttl?: number;
  readonly stores?: readonly string[];
}

export const transformHref = (mount: string, kind?: 'roles' | 'transformations', name?: string) =>
  `/transform/${encodeURIComponent(mount)}${kind && name !== undefined ? `/${kind}/${encodeURIComponent(name)}` : ''}`;

export const readTransformation = (api: ApiClient, mount: string, name: string) =>
  api.get<{ data: Transformation }>(mountUrl(mount, 'transformation', name)).then((r) => r.data);

interface TransformationFormProps {
  readonly api: ApiClient;
  readonly mount: string;
  /** The templates to choose from (FPE and masking). */
  readonly templates: readonly string[];
  /** The transformation edited (its type is fixed); none: a new one. */
  readonly name?: string;
  readonly current?: Transformation;
  readonly onSaved: (name: string) => void;
}

/** Creates a transformation (name and type asked) or edits one; the fields follow the type. */
export function TransformationForm({ api, mount, templates, name, current, onSaved }: TransformationFormProps) {
  const [newName, setNewName] = useState(name ?? '');
  const [type, setType] = useState<string>(current?.type ?? 'fpe');
  const [template, setTemplate] = useState(current?.templates[0] ?? templates[0] ?? '');
  const [tweakSource, setTweakSource] = useState(current?.tweak_source ?? 'supplied');
  const [maskChar, setMaskChar] = useState(current?.masking_character ?? '*');
  const [allowed, setAllowed] = useState(current?.allowed_roles.join(', ') ?? '');
  const [stores, setStores] = useState(current?.stores?.join(', ') ?? 'builtin/internal');
  const [maxTtl, setMaxTtl] = useState(current?.max_ttl ? ttlField(current.max_ttl) : '');
  const [mapping, setMapping] = useState(current?.mapping_mode ?? 'default');
  const action = useAction();
  const submit = namedSubmit(action, newName, async (target) => {
    const common = { allowed_roles: splitList(allowed) };
    const body =
      type === 'fpe'
        ? { ...common, template, tweak_source: tweakSource }
        : type === 'masking'
          ? { ...common, template, masking_character: maskChar }
          : { ...common, stores: splitList(stores), max_ttl: maxTtl.trim() || '0', mapping_mode: mapping };
    await api.post(mountUrl(mount, `transformation/${encodeURIComponent(type)}`, target), body);
    onSaved(target);
  });
  const label = name ? `Edit transformation ${name}` : 'New transformation';
  return html`<form onSubmit=${submit} aria-label=${label}>
    <div class="row">
      ${!name && html`<${Field} label="Transformation name" name="name" required value=${newName} onInput=${setNewName} />`}
      ${!name && html`<${Select} label="Type" name="type" value=${type} options=${TRANSFORMATION_TYPES} onInput=${setType} />`}
      ${type !== 'tokenization' && html`<${Select} label="Template" name="template" value=${template} options=${templates.map((t) => [t, t] as const)} onInput=${setTemplate} />`}
      ${type === 'fpe' && html`<${Select} label="Tweak source" name="tweak_source" value=${tweakSource} options=${TWEAK_SOURCES} onInput=${setTweakSource} />`}
      ${type === 'masking' && html`<${Field} label="Masking character" name="masking_character" required value=${maskChar} onInput=${setMaskChar} maxlength="1" />`}
    </div>
    ${type === 'tokenization' &&
    html`<div class="row">
      <${Field} label="Stores" name="stores" required value=${stores} onInput=${setStores} hint="Comma-separated; builtin/internal is the mount's own storage." />
      <${Field} label="Maximum token TTL" name="max_ttl" value=${maxTtl} onInput=${setMaxTtl} hint="Empty: tokens do not expire. E.g. 720h." />
      <${Select} label="Mapping mode" name="mapping_mode" value=${mapping} options=${[['default', 'Default'], ['exportable', 'Exportable']]} onInput=${setMapping} />
    </div>`}
    <${Field} label="Allowed roles" name="allowed_roles" value=${allowed} onInput=${setAllowed} hint="Comma-separated role names; globs allowed (pay-*, *)." />
    <${ErrorMessage} messages=${action.error} />
    <button type="submit" disabled=${action.busy}>${name ? 'Save transformation' : 'Create transformation'}</button>
  </form>`;
}

interface TransformationData {
  readonly transformation: Transformation | Denied;
  readonly templates: string[];
}

/** `/transform/:mount/transformations/:name`: the transformation, editing and deleting it. */
export const transformTransformationPage = page({
  path: '/transform/:mount/transformations/:name',
  title: ({ params }) => `Transformation ${params.name}`,
  signedIn: true,
  load: async ({ api, params }): Promise<TransformationData> => {
    const templates = await readTemplates(api, params.mount);
    return {
      transformation: await readOrDenied(readTransformation(api, params.mount, params.name)),
      templates: isDenied(templates) ? [] : templates.map((t) => t.name),
    };
  },
  view: (props: PageProps<TransformationData>) => {
    const { data, params } = props;
    const { mount, name } = params;
    const t = data.transformation;
    const [saved, setSaved] = useState(false);
    return html`<section>
      <p><a href=${props.href('/transform')}>Transform</a> / <a href=${props.href(transformHref(mount))}>${mount}/</a></p>
      <h1>Transformation ${name}</h1>
      ${isDenied(t)
        ? html`<${PermissionDenied} what=${`reading the transformation ${name}`} denied=${t} />`
        : html`<div class="card">
            <${Facts}
              items=${[
                ['Type', t.type],
                ...(t.type === 'tokenization'
                  ? [
                    ['Stores', (t.stores ?? []).join(', ')],
                    ['Maximum token TTL', formatTtl(t.max_ttl, 'none')],
                  ]
                  : [['Template', t.templates.join(', ')]]),
                ...(t.type === 'fpe' ? [['Tweak source', t.tweak_source]] : []),
                ...(t.type === 'masking' ? [['Masking character', html`<code>${t.masking_character}</code>`]] : []),
                ['Allowed roles', t.allowed_roles.join(', ') || 'none'],
              ]}
            />
            ${saved && html`<${Notice}>Saved transformation ${name}.<//>`}
            <h2>Edit</h2>
            <${TransformationForm}
              key=${`${mount}/${name}`}
              api=${props.api}
              mount=${mount}
              templates=${data.templates}
              name=${name}
              current=${t}
              onSaved=${() => (setSaved(true), props.reload())}
            />
            <div class="actions">
              <${ConfirmButton}
                label="Delete transformation"
                confirmLabel="Delete"
                question=${`Delete the transformation ${name}? What it encoded can no longer be decoded.`}
                onConfirm=${async () => {
                  await props.api.delete(mountUrl(mount, 'transformation', name));
                  props.navigate(transformHref(mount));
                }}
              />
            </div>
          </div>`}
    </section>`;
  },
});
