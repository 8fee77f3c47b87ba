import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ErrorMessage, Notice } from '../../shared/components';
import type { PageDef, PageProps } from '../../shared/console';
import { useAction } from '../../shared/hooks';
import { html } from '../../shared/html';
import { ConfirmButton, Table, Tabs } from '../components';
import { type Live, readLive, type Source, useLive } from '../live';
import { catalogPage } from '../page';

/** A form's values, by field name. */
export type Draft = Record<string, string | boolean>;

/** One kind of ACL object (token, policy, role, auth method, binding rule): its API paths, table and form. */
export interface AclKind<T> {
  /** The console path: /acl/<slug>, /acl/<slug>/new, /acl/<slug>/:id. */
  readonly slug: string;
  /** "policy": New policy, Create policy, Delete policy. */
  readonly noun: string;
  /** "Policies": the heading and the tab. */
  readonly title: string;
  /** GET (the list, blocking). */
  readonly listPath: string;
  /** PUT (create). */
  readonly createPath: string;
  /** GET, PUT (update), DELETE of one object. */
  readonly itemPath: (id: string) => string;
  readonly id: (item: T) => string;
  /** The link text in the list and the item page's heading. */
  readonly label: (item: T) => string;
  /** Columns after the linked label: header and cell. */
  readonly columns: readonly (readonly [string, (item: T) => ComponentChildren])[];
  /** The form's values for a new object (no item) or for editing one. */
  readonly draft: (item?: T) => Draft;
  /** The API body from the form (may throw an Error naming a bad field). */
  readonly body: (draft: Draft, item?: T) => unknown;
  /** The form's fields. */
  readonly Fields: (props: { draft: Draft; set: (name: string) => (value: string | boolean) => void; editing: boolean }) => ComponentChildren;
  /** Read-only facts above the edit form (a token's secret ID). */
  readonly Details?: (props: { item: T }) => ComponentChildren;
}

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** Every kind, for the tabs. */
let allKinds: readonly AclKind<any>[] = [];

function AclTabs({ current, href }: { current: string; href: (p: string) => string }) {
  return html`<${Tabs} label="ACL" current=${current} items=${allKinds.map((k) => [href(`/acl/${k.slug}`), k.title] as const)} />`;
}

/** The list, new and item pages of each kind (new before :id, so "new" is no id). */
export function aclPages(kinds: readonly AclKind<any>[]): PageDef[] {
  allKinds = kinds;
  return kinds.flatMap((kind) => [listPage(kind, `/acl/${kind.slug}`), newPage(kind), itemPage(kind)]);
}

/** The tokens list also answers `/acl` (the ACL item of the header). */
export function aclIndexPage(kind: AclKind<any>): PageDef {
  return listPage(kind, '/acl');
}

function listPage<T>(kind: AclKind<T>, path: string): PageDef {
  const source: Source<T[]> = { path: kind.listPath };
  function ListView({ api, data, href }: PageProps<Live<T[]>>) {
    const items = useLive(api, source, data);
    return html`<section>
      <${AclTabs} current=${href(`/acl/${kind.slug}`)} href=${href} />
      <h1>${kind.title}</h1>
      <p><a class="button" href=${href(`/acl/${kind.slug}/new`)}>New ${kind.noun}</a></p>
      <${Table} caption=${kind.title} headers=${kind.columns.map(([h]) => h)} empty=${`No ${kind.title.toLowerCase()}.`}>
        ${items.map(
          (item) => html`<tr key=${kind.id(item)}>
            <td><a href=${href(`/acl/${kind.slug}/${encodeURIComponent(kind.id(item))}`)}>${kind.label(item)}</a></td>
            ${kind.columns.slice(1).map(([, cell]) => html`<td>${cell(item)}</td>`)}
          </tr>`,
        )}
      <//>
    </section>`;
  }
  return catalogPage({
    path,
    title: kind.title,
    load: ({ api }) => readLive(api, source),
    view: (props: PageProps<Live<T[]>>) => html`<${ListView} ...${props} />`,
  });
}

interface AclFormProps<T> {
  readonly kind: AclKind<T>;
  readonly item?: T;
  readonly submitLabel: string;
  readonly onSubmit: (body: unknown) => Promise<void>;
}

function AclForm<T>({ kind, item, submitLabel, onSubmit }: AclFormProps<T>) {
  const [draft, setDraft] = useState<Draft>(() => kind.draft(item));
  const [saved, setSaved] = useState(false);
  const action = useAction();
  const set = (name: string) => (value: string | boolean) => {
    setSaved(false);
    setDraft((d) => ({ ...d, [name]: value }));
  };
  const submit = (e: Event) => {
    e.preventDefault();
    setSaved(false);
    void action.run(async () => {
      await onSubmit(kind.body(draft, item));
      setSaved(true);
    });
  };
  return html`<form class="card" onSubmit=${submit}>
    <${kind.Fields} draft=${draft} set=${set} editing=${item !== undefined} />
    <${ErrorMessage} messages=${action.error} />
    ${saved && item !== undefined && html`<${Notice}>Saved.<//>`}
    <button type="submit" disabled=${action.busy}>${submitLabel}</button>
  </form>`;
}

function newPage<T>(kind: AclKind<T>): PageDef {
  function NewView({ api, href, navigate }: PageProps) {
    return html`<section>
      <${AclTabs} current=${href(`/acl/${kind.slug}`)} href=${href} />
      <h1>New ${kind.noun}</h1>
      <${AclForm}
        kind=${kind}
        submitLabel=${`Create ${kind.noun}`}
        onSubmit=${async (body: unknown) => {
          const created = await api.put<T>(kind.createPath, body);
          navigate(`/acl/${kind.slug}/${encodeURIComponent(kind.id(created))}`);
        }}
      />
    </section>`;
  }
  return catalogPage({ path: `/acl/${kind.slug}/new`, title: `New ${kind.noun}`, view: (props) => html`<${NewView} ...${props} />` });
}

function itemPage<T>(kind: AclKind<T>): PageDef {
  function ItemView({ api, data, href, navigate, reload }: PageProps<T>) {
    const remove = useAction();
    const id = encodeURIComponent(kind.id(data));
    return html`<section>
      <${AclTabs} current=${href(`/acl/${kind.slug}`)} href=${href} />
      <h1>${capitalize(kind.noun)} ${kind.label(data)}</h1>
      ${kind.Details && html`<${kind.Details} item=${data} />`}
      <${AclForm}
        key=${id}
        kind=${kind}
        item=${data}
        submitLabel="Save"
        onSubmit=${async (body: unknown) => {
          await api.put(kind.itemPath(id), body);
          reload();
        }}
      />
      <div class="actions">
        <${ConfirmButton}
          label=${`Delete ${kind.noun}`}
          confirmLabel="Confirm delete"
          action=${remove}
          onConfirm=${() =>
            void remove.run(async () => {
              await api.delete(kind.itemPath(id));
              navigate(`/acl/${kind.slug}`);
            })}
        />
      </div>
      <${ErrorMessage} messages=${remove.error} />
    </section>`;
  }
  return catalogPage({
    path: `/acl/${kind.slug}/:id`,
    title: ({ params }, data) => `${capitalize(kind.noun)} ${data ? kind.label(data as T) : params.id}`,
    load: ({ api, params }) => api.get<T>(kind.itemPath(encodeURIComponent(params.id))),
    view: (props: PageProps<T>) => html`<${ItemView} ...${props} />`,
  });
}
