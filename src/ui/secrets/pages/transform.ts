import { useState } from 'preact/hooks';
import { ApiClient } from '../../shared/api';
import { ErrorMessage, Field } from '../../shared/components';
import { page, type PageProps } from '../../shared/console';
import { namedSubmit, useAction } from '../../shared/hooks';
import { html } from '../../shared/html';
import { Denied, isDenied, listKeys, readOrDenied } from '../api';
import { PermissionDenied, splitList } from '../components';
import { engineMountsPage, mountUrl } from './engine-mounts';
import { Alphabet, AlphabetsCard, readAlphabets, readTemplates, Template, TemplatesCard } from './transform-objects';
import { readTransformation, Transformation, TransformationForm, TRANSFORMATION_TYPES, transformHref } from './transform-transformation';

/** `/transform`: the transform mounts. */
export const transformMountsPage = engineMountsPage({
  path: '/transform',
  title: 'Transform',
  type: 'transform',
  engine: 'transform',
  lead: 'Format-preserving encryption, masking and tokenization of values by role.',
  href: (mount) => transformHref(mount),
});

interface TransformMount {
  readonly roles: string[] | Denied;
  readonly transformations: (Transformation & { name: string })[] | Denied;
  readonly templates: Template[] | Denied;
  readonly alphabets: Alphabet[] | Denied;
}

async function transformations(api: ApiClient, mount: string): Promise<(Transformation & { name: string })[]> {
  const names = await listKeys(api, mountUrl(mount, 'transformation'));
  return Promise.all(names.map(async (name) => ({ name, ...(await readTransformation(api, mount, name)) })));
}

/** `/transform/:mount`: roles, transformations (filtered by type with `?type=`), templates and alphabets. */
export const transformMountPage = page({
  path: '/transform/:mount',
  title: ({ params }) => `Transform ${params.mount}/`,
  signedIn: true,
  load: async ({ api, params }): Promise<TransformMount> => ({
    roles: await readOrDenied(listKeys(api, mountUrl(params.mount, 'role'))),
    transformations: await readOrDenied(transformations(api, params.mount)),
    templates: await readTemplates(api, params.mount),
    alphabets: await readAlphabets(api, params.mount),
  }),
  view: (props: PageProps<TransformMount>) => {
    const { data, params } = props;
    const mount = params.mount;
    const templates = isDenied(data.templates) ? [] : data.templates.map((t) => t.name);
    return html`<section>
      <p><a href=${props.href('/transform')}>Transform</a></p>
      <h1>Transform ${mount}/</h1>
      <div class="card">
        <h2>Roles</h2>
        ${isDenied(data.roles)
          ? html`<${PermissionDenied} what="listing roles" denied=${data.roles} />`
          : data.roles.length === 0
            ? html`<p>No roles yet.</p>`
            : html`<ul class="secrets-list">${data.roles.map((r) => html`<li><a href=${props.href(transformHref(mount, 'roles', r))}>${r}</a></li>`)}</ul>`}
        <${NewRole} api=${props.api} mount=${mount} onSaved=${(name: string) => props.navigate(transformHref(mount, 'roles', name))} />
      </div>
      <div class="card">
        <h2>Transformations</h2>
        <${TransformationList} data=${data.transformations} mount=${mount} type=${props.query.get('type') ?? ''} href=${props.href} />
        <h3>New transformation</h3>
        <${TransformationForm} api=${props.api} mount=${mount} templates=${templates} onSaved=${(name: string) => props.navigate(transformHref(mount, 'transformations', name))} />
      </div>
      <${TemplatesCard} api=${props.api} mount=${mount} templates=${data.templates} alphabets=${isDenied(data.alphabets) ? [] : data.alphabets.map((a) => a.name)} onChange=${props.reload} />
      <${AlphabetsCard} api=${props.api} mount=${mount} alphabets=${data.alphabets} onChange=${props.reload} />
    </section>`;
  },
});

/** The transformations as a table, with links that filter it by type (kept in the URL). */
function TransformationList(props: { data: TransformMount['transformations']; mount: string; type: string; href: (p: string) => string }) {
  const { data, mount, type, href } = props;
  if (isDenied(data)) return html`<${PermissionDenied} what="listing transformations" denied=${data} />`;
  const shown = type ? data.filter((t) => t.type === type) : data;
  const filters: (readonly [string, string])[] = [['', 'All'], ...TRANSFORMATION_TYPES.map(([t]) => [t, t === 'fpe' ? 'FPE' : t[0].toUpperCase() + t.slice(1)] as const)];
  return html`<div>
    <nav aria-label="Transformation types" class="secrets-crumbs">
      ${filters.map(([t, text], i) => html`${i > 0 ? ' · ' : ''}<a href=${href(`${transformHref(mount)}${t ? `?type=${t}` : ''}`)} aria-current=${t === type ? 'page' : undefined}>${text}</a>`)}
    </nav>
    ${shown.length === 0
      ? html`<p>No ${type ? `${type} ` : ''}transformations yet.</p>`
      : html`<table>
          <caption class="visually-hidden">Transformations of ${mount}/</caption>
          <thead><tr><th scope="col">Transformation</th><th scope="col">Type</th><th scope="col">Template or stores</th><th scope="col">Allowed roles</th></tr></thead>
          <tbody>
            ${shown.map((t) => html`<tr>
              <td><a href=${href(transformHref(mount, 'transformations', t.name))}>${t.name}</a></td>
              <td>${t.type}</td>
              <td>${t.type === 'tokenization' ? (t.stores ?? []).join(', ') : t.templates.join(', ')}</td>
              <td>${t.allowed_roles.join(', ') || 'none'}</td>
            </tr>`)}
          </tbody>
        </table>`}
  </div>`;
}

function NewRole({ api, mount, onSaved }: { api: ApiClient; mount: string; onSaved: (name: string) => void }) {
  const [name, setName] = useState('');
  const [names, setNames] = useState('');
  const action = useAction();
  const submit = namedSubmit(action, name, async (target) => {
    await api.post(mountUrl(mount, 'role', target), { transformations: splitList(names) });
    onSaved(target);
  });
  return html`<form onSubmit=${submit} aria-labelledby="transform-new-role">
    <h3 id="transform-new-role">New role</h3>
    <div class="row">
      <${Field} label="Role name" name="name" required value=${name} onInput=${setName} />
      <${Field} label="Role transformations" name="transformations" value=${names} onInput=${setNames} hint="Comma-separated transformation names." />
    </div>
    <${ErrorMessage} messages=${action.error} />
    <button type="submit" disabled=${action.busy}>Create role</button>
  </form>`;
}
