import { useState } from 'preact/hooks';
import { ApiClient } from '../../shared/api';
import { ErrorMessage, Field, Select } from '../../shared/components';
import { namedSubmit, useAction } from '../../shared/hooks';
import { html } from '../../shared/html';
import { apiPath, Denied, isDenied, listKeys, readOrDenied } from '../api';
import { ConfirmButton, PermissionDenied } from '../components';
import { mountUrl } from './engine-mounts';

/**
 * The transform engine's templates and alphabets: stored ones listed, created and deleted; the
 * built-ins (which LIST leaves out) read by name and shown read-only.
 */

/** The engine's built-in names (the `builtin/` prefix is reserved for them). */
const BUILTIN_TEMPLATES = ['builtin/creditcardnumber', 'builtin/socialsecuritynumber', 'builtin/any'];
const BUILTIN_ALPHABETS = ['builtin/numeric', 'builtin/alphalower', 'builtin/alphaupper', 'builtin/alphanumericlower', 'builtin/alphanumericupper', 'builtin/alphanumeric'];

/** The API path of an object (`template/builtin/any`: a built-in's slash stays a path separator). */
export const objectUrl = (mount: string, kind: string, name: string) => mountUrl(mount, `${kind}/${apiPath(name)}`);

export interface Template {
  readonly name: string;
  readonly builtin: boolean;
  readonly pattern: string;
  readonly alphabet: string;
}

export interface Alphabet {
  readonly name: string;
  readonly builtin: boolean;
  readonly alphabet: string;
}

/** Every object of a kind, the built-ins first, each read for its fields. */
async function readAll<T>(api: ApiClient, mount: string, kind: string, builtins: string[]): Promise<(T & { name: string; builtin: boolean })[]> {
  const stored = await listKeys(api, mountUrl(mount, kind));
  const names = [...builtins, ...stored.filter((n) => !builtins.includes(n))];
  return Promise.all(
    names.map(async (name) => ({ name, builtin: builtins.includes(name), ...(await api.get<{ data: T }>(objectUrl(mount, kind, name))).data })),
  );
}

export const readTemplates = (api: ApiClient, mount: string) => readOrDenied(readAll<Template>(api, mount, 'template', BUILTIN_TEMPLATES));
export const readAlphabets = (api: ApiClient, mount: string) => readOrDenied(readAll<Alphabet>(api, mount, 'alphabet', BUILTIN_ALPHABETS));

function DeleteObject({ api, mount, kind, name, onDone }: { api: ApiClient; mount: string; kind: string; name: string; onDone: () => void }) {
  return html`<${ConfirmButton}
    label=${`Delete ${kind} ${name}`}
    text="Delete"
    confirmLabel="Delete"
    question=${`Delete the ${kind} ${name}?`}
    onConfirm=${async () => {
      await api.delete(objectUrl(mount, kind, name));
      onDone();
    }}
  />`;
}

const builtinBadge = html`<span class="badge">built-in</span>`;

export function TemplatesCard(props: { api: ApiClient; mount: string; templates: Template[] | Denied; alphabets: string[]; onChange: () => void }) {
  const { api, mount, templates, onChange } = props;
  return html`<div class="card">
    <h2>Templates</h2>
    ${isDenied(templates)
      ? html`<${PermissionDenied} what="listing templates" denied=${templates} />`
      : html`<table>
          <caption class="visually-hidden">Templates of ${mount}/</caption>
          <thead><tr><th scope="col">Template</th><th scope="col">Pattern</th><th scope="col">Alphabet</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            ${templates.map((t) => html`<tr>
              <td>${t.name}</td>
              <td><code>${t.pattern}</code></td>
              <td>${t.alphabet || 'none'}</td>
              <td>${t.builtin ? builtinBadge : html`<${DeleteObject} api=${api} mount=${mount} kind="template" name=${t.name} onDone=${onChange} />`}</td>
            </tr>`)}
          </tbody>
        </table>`}
    <${NewTemplate} api=${api} mount=${mount} alphabets=${props.alphabets} onSaved=${onChange} />
  </div>`;
}

function NewTemplate({ api, mount, alphabets, onSaved }: { api: ApiClient; mount: string; alphabets: string[]; onSaved: () => void }) {
  const [name, setName] = useState('');
  const [pattern, setPattern] = useState('');
  const [alphabet, setAlphabet] = useState(alphabets[0] ?? 'builtin/numeric');
  const action = useAction();
  const submit = namedSubmit(action, name, async (target) => {
    await api.post(objectUrl(mount, 'template', target), { type: 'regex', pattern, alphabet });
    setName('');
    setPattern('');
    onSaved();
  });
  return html`<form onSubmit=${submit} aria-labelledby="transform-new-template">
    <h3 id="transform-new-template">New template</h3>
    <div class="row">
      <${Field} label="Template name" name="name" required value=${name} onInput=${setName} />
      <${Field} label="Pattern" name="pattern" required value=${pattern} onInput=${setPattern} hint="RE2 syntax; capture groups select what is transformed: (\\d{4})-(\\d{4})" />
      <${Select} label="Template alphabet" name="alphabet" value=${alphabet} options=${alphabets.map((a) => [a, a] as const)} onInput=${setAlphabet} />
    </div>
    <${ErrorMessage} messages=${action.error} />
    <button type="submit" disabled=${action.busy}>Create template</button>
  </form>`;
}

export function AlphabetsCard(props: { api: ApiClient; mount: string; alphabets: Alphabet[] | Denied; onChange: () => void }) {
  const { api, mount, alphabets, onChange } = props;
  return html`<div class="card">
    <h2>Alphabets</h2>
    ${isDenied(alphabets)
      ? html`<${PermissionDenied} what="listing alphabets" denied=${alphabets} />`
      : html`<table>
          <caption class="visually-hidden">Alphabets of ${mount}/</caption>
          <thead><tr><th scope="col">Alphabet</th><th scope="col">Characters</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            ${alphabets.map((a) => html`<tr>
              <td>${a.name}</td>
              <td><code>${a.alphabet}</code></td>
              <td>${a.builtin ? builtinBadge : html`<${DeleteObject} api=${api} mount=${mount} kind="alphabet" name=${a.name} onDone=${onChange} />`}</td>
            </tr>`)}
          </tbody>
        </table>`}
    <${NewAlphabet} api=${api} mount=${mount} onSaved=${onChange} />
  </div>`;
}

function NewAlphabet({ api, mount, onSaved }: { api: ApiClient; mount: string; onSaved: () => void }) {
  const [name, setName] = useState('');
  const [alphabet, setAlphabet] = useState('');
  const action = useAction();
  const submit = namedSubmit(action, name, async (target) => {
    await api.post(objectUrl(mount, 'alphabet', target), { alphabet });
    setName('');
    setAlphabet('');
    onSaved();
  });
  return html`<form onSubmit=${submit} aria-labelledby="transform-new-alphabet">
    <h3 id="transform-new-alphabet">New alphabet</h3>
    <div class="row">
      <${Field} label="Alphabet name" name="name" required value=${name} onInput=${setName} />
      <${Field} label="Characters" name="alphabet" required value=${alphabet} onInput=${setAlphabet} hint="Each character once, at least 2: 0123456789abcdef" />
    </div>
    <${ErrorMessage} messages=${action.error} />
    <button type="submit" disabled=${action.busy}>Create alphabet</button>
  </form>`;
}
