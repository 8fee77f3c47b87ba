import { useState } from 'preact/hooks';
import { ApiClient } from '../../shared/api';
import { ErrorMessage, Field, Notice, TextArea } from '../../shared/components';
import { page, type PageProps } from '../../shared/console';
import { useAction } from '../../shared/hooks';
import { html } from '../../shared/html';
import { Denied, isDenied, listKeys, readOrDenied } from '../api';
import { ConfirmButton, PermissionDenied } from '../components';

/** Policies the API keeps whatever happens: they cannot be deleted (root cannot be edited either). */
const BUILTIN = ['root', 'default', 'response-wrapping'];

const policyUrl = (name: string) => `/v1/sys/policies/acl/${encodeURIComponent(name)}`;

/** Writes a policy; the API parses the HCL (or JSON) first and answers 400 with the parser's message. */
async function savePolicy(api: ApiClient, name: string, policy: string): Promise<void> {
  await api.put(policyUrl(name), { policy });
}

/** `/policies`: the ACL policies, and a new one. */
export const policiesPage = page({
  path: '/policies',
  title: 'Policies',
  signedIn: true,
  load: ({ api }) => readOrDenied(listKeys(api, '/v1/sys/policies/acl')),
  view: (props: PageProps<string[] | Denied>) => html`<section>
    <h1>Policies</h1>
    ${isDenied(props.data)
      ? html`<${PermissionDenied} what="listing policies" denied=${props.data} />`
      : html`<ul class="secrets-list">
          ${props.data.map((name) => html`<li><a href=${props.href(`/policies/${encodeURIComponent(name)}`)}>${name}</a></li>`)}
        </ul>`}
    <${NewPolicy} ...${props} />
  </section>`,
});

function NewPolicy(props: PageProps) {
  const [name, setName] = useState('');
  return html`<div class="card">
    <h2>New policy</h2>
    <${Field} label="Name" name="name" required value=${name} onInput=${setName} />
    <${PolicyEditor}
      api=${props.api}
      name=${name.trim()}
      text=""
      onSaved=${() => props.navigate(`/policies/${encodeURIComponent(name.trim())}`)}
    />
  </div>`;
}

/** The HCL editor: Save sends the text to the API, which refuses a policy it cannot parse and says why. */
function PolicyEditor({ api, name, text, onSaved }: { api: ApiClient; name: string; text: string; onSaved: () => void }) {
  const [policy, setPolicy] = useState(text);
  const [saved, setSaved] = useState(false);
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    setSaved(false);
    void action.run(async () => {
      if (!name) throw new Error('name is required');
      await savePolicy(api, name, policy);
      setSaved(true);
      onSaved();
    });
  };
  return html`<form onSubmit=${submit} aria-label=${name ? `Edit policy ${name}` : 'New policy'}>
    <${TextArea}
      label="Policy (HCL or JSON)"
      name="policy"
      rows="14"
      spellcheck="false"
      value=${policy}
      onInput=${(v: string) => (setPolicy(v), setSaved(false))}
      hint='path "secret/data/*" { capabilities = ["read", "list"] }'
    />
    <${ErrorMessage} messages=${action.error} />
    ${saved && html`<${Notice}>Saved policy ${name}.<//>`}
    <button type="submit" disabled=${action.busy}>Save policy</button>
  </form>`;
}

interface PolicyData {
  readonly name: string;
  readonly policy: string;
}

/** `/policies/:name`: a policy's text, edited in place; deleted after a confirmation. */
export const policyPage = page({
  path: '/policies/:name',
  title: ({ params }) => `Policy ${params.name}`,
  signedIn: true,
  load: async ({ api, params }) => readOrDenied(api.get<{ data: PolicyData }>(policyUrl(params.name)).then((r) => r.data)),
  view: (props: PageProps<PolicyData | Denied>) => {
    const { data, params } = props;
    return html`<section>
      <p><a href=${props.href('/policies')}>Policies</a></p>
      <h1>Policy ${params.name}</h1>
      ${isDenied(data)
        ? html`<${PermissionDenied} what=${`reading the policy ${params.name}`} denied=${data} />`
        : params.name === 'root'
          ? html`<p>The root policy allows everything; it has no text and cannot be changed.</p>`
          : html`<div class="card">
              <${PolicyEditor} key=${data.name} api=${props.api} name=${data.name} text=${data.policy} onSaved=${() => undefined} />
            </div>`}
      ${!BUILTIN.includes(params.name) &&
      html`<div class="actions">
        <${ConfirmButton}
          label="Delete policy"
          confirmLabel="Delete"
          question=${`Delete the policy ${params.name}? Tokens that name it lose what it allowed.`}
          onConfirm=${async () => {
            await props.api.delete(policyUrl(params.name));
            props.navigate('/policies');
          }}
        />
      </div>`}
    </section>`;
  },
});
