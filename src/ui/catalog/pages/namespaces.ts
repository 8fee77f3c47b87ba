import { useState } from 'preact/hooks';
import type { ApiClient } from '../../shared/api';
import { ErrorMessage, Field } from '../../shared/components';
import type { PageProps } from '../../shared/console';
import { useAction } from '../../shared/hooks';
import { html } from '../../shared/html';
import { ConfirmButton, Table } from '../components';
import { type Live, readLive, type Source, useLive } from '../live';
import { catalogPage } from '../page';
import type { Namespace } from '../types';

const NAMESPACES: Source<Namespace[]> = { path: '/v1/namespaces' };

/** `/namespaces`: list, create, delete (a deleted namespace is marked, then removed in the background); in no namespace. */
export const namespacesPage = catalogPage({
  path: '/namespaces',
  title: 'Namespaces',
  load: ({ api }) => readLive(api, NAMESPACES),
  view: (props: PageProps<Live<Namespace[]>>) => html`<${NamespacesView} ...${props} />`,
}, { namespaced: false });

function NamespacesView({ api, data }: PageProps<Live<Namespace[]>>) {
  const namespaces = useLive(api, NAMESPACES, data);
  return html`<section>
    <h1>Namespaces</h1>
    <${Table} caption="Namespaces" headers=${['Name', 'Description', 'State', 'Actions']} empty="No namespaces your token may see.">
      ${namespaces.map(
        (ns) => html`<tr key=${ns.Name}>
          <td>${ns.Name}</td>
          <td>${ns.Description || '—'}</td>
          <td>${ns.DeletedAt ? html`<span class="badge warn">being deleted</span>` : html`<span class="badge ok">active</span>`}</td>
          <td>${ns.Name !== 'default' && !ns.DeletedAt && html`<${DeleteNamespace} api=${api} name=${ns.Name} />`}</td>
        </tr>`,
      )}
    <//>
    <${NewNamespace} api=${api} />
  </section>`;
}

function DeleteNamespace({ api, name }: { api: ApiClient; name: string }) {
  const action = useAction();
  const remove = () => void action.run(() => api.delete(`/v1/namespace/${encodeURIComponent(name)}`));
  return html`<div>
    <${ConfirmButton} label=${`Delete ${name}`} text="Delete" confirmLabel=${`Confirm delete of ${name}`} action=${action} onConfirm=${remove} />
    <${ErrorMessage} messages=${action.error} />
  </div>`;
}

function NewNamespace({ api }: { api: ApiClient }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      await api.put('/v1/namespace', { Name: name.trim(), Description: description.trim() });
      setName('');
      setDescription('');
    });
  };
  return html`<form class="card" onSubmit=${submit} aria-labelledby="new-namespace">
    <h2 id="new-namespace">New namespace</h2>
    <div class="row">
      <${Field} label="Name" name="name" required value=${name} onInput=${setName} hint="A DNS label: letters, digits and hyphens" />
      <${Field} label="Description" name="description" value=${description} onInput=${setDescription} />
    </div>
    <${ErrorMessage} messages=${action.error} />
    <button type="submit" disabled=${action.busy}>Create namespace</button>
  </form>`;
}
