import { Checkbox, CopyText, Facts, Field, Select, TextArea } from '../../shared/components';
import { formatTime } from '../../shared/format';
import { html } from '../../shared/html';
import { splitNames } from '../components';
import type { AclLink, AclPolicy, AclRole, AclToken, AuthMethod, BindingRule } from '../types';
import type { AclKind, Draft } from './acl';

/** The ACL objects the console manages, each through its own endpoints under /v1/acl. */

const names = (links: readonly AclLink[] | undefined) => (links ?? []).map((l) => l.Name ?? l.ID).join(', ');
const links = (text: unknown) => splitNames(String(text)).map((Name) => ({ Name }));
const str = (draft: Draft, name: string) => String(draft[name] ?? '').trim();

export const tokenKind: AclKind<AclToken> = {
  slug: 'tokens',
  noun: 'token',
  title: 'Tokens',
  listPath: '/v1/acl/tokens',
  createPath: '/v1/acl/token',
  itemPath: (id) => `/v1/acl/token/${id}`,
  id: (t) => t.AccessorID,
  label: (t) => t.AccessorID,
  columns: [
    ['Accessor ID', () => null],
    ['Description', (t) => t.Description || '—'],
    ['Policies', (t) => names(t.Policies) || '—'],
    ['Roles', (t) => names(t.Roles) || '—'],
    ['Scope', (t) => (t.Local ? 'local' : 'global')],
  ],
  draft: (t) => ({ description: t?.Description ?? '', policies: names(t?.Policies), roles: names(t?.Roles), local: t?.Local ?? false }),
  body: (d, t) => ({
    ...(t ? { AccessorID: t.AccessorID } : {}),
    Description: str(d, 'description'),
    Policies: links(d.policies),
    Roles: links(d.roles),
    Local: t ? t.Local : d.local === true,
  }),
  Fields: ({ draft, set, editing }) => html`<div>
    <${Field} label="Description" name="description" value=${draft.description} onInput=${set('description')} />
    <${Field} label="Policies" name="policies" value=${draft.policies} onInput=${set('policies')} hint="Policy names, separated by commas" />
    <${Field} label="Roles" name="roles" value=${draft.roles} onInput=${set('roles')} hint="Role names, separated by commas" />
    ${!editing && html`<${Checkbox} label="Local to this datacenter" name="local" checked=${draft.local} onChange=${set('local')} />`}
  </div>`,
  Details: ({ item }) => html`<div>
    <${Facts} items=${[['Accessor ID', html`<code>${item.AccessorID}</code>`], ['Created', formatTime(item.CreateTime)], ['Scope', item.Local ? 'local' : 'global']]} />
    <details class="catalog-secret">
      <summary>Show the secret ID</summary>
      <${CopyText} label="Secret ID" text=${item.SecretID} />
    </details>
  </div>`,
};

export const policyKind: AclKind<AclPolicy> = {
  slug: 'policies',
  noun: 'policy',
  title: 'Policies',
  listPath: '/v1/acl/policies',
  createPath: '/v1/acl/policy',
  itemPath: (id) => `/v1/acl/policy/${id}`,
  id: (p) => p.ID,
  label: (p) => p.Name,
  columns: [
    ['Name', () => null],
    ['Description', (p) => p.Description || '—'],
  ],
  draft: (p) => ({ name: p?.Name ?? '', description: p?.Description ?? '', rules: p?.Rules ?? '' }),
  body: (d, p) => ({ ...(p ? { ID: p.ID } : {}), Name: str(d, 'name'), Description: str(d, 'description'), Rules: String(d.rules ?? '') }),
  Fields: ({ draft, set }) => html`<div>
    <${Field} label="Name" name="name" required value=${draft.name} onInput=${set('name')} />
    <${Field} label="Description" name="description" value=${draft.description} onInput=${set('description')} />
    <${TextArea} label="Rules" name="rules" value=${draft.rules} onInput=${set('rules')} hint='HCL or JSON rules, e.g. key_prefix "app/" { policy = "read" }; the API checks them' spellcheck="false" />
  </div>`,
};

export const roleKind: AclKind<AclRole> = {
  slug: 'roles',
  noun: 'role',
  title: 'Roles',
  listPath: '/v1/acl/roles',
  createPath: '/v1/acl/role',
  itemPath: (id) => `/v1/acl/role/${id}`,
  id: (r) => r.ID,
  label: (r) => r.Name,
  columns: [
    ['Name', () => null],
    ['Description', (r) => r.Description || '—'],
    ['Policies', (r) => names(r.Policies) || '—'],
  ],
  draft: (r) => ({ name: r?.Name ?? '', description: r?.Description ?? '', policies: names(r?.Policies) }),
  body: (d, r) => ({ ...(r ? { ID: r.ID } : {}), Name: str(d, 'name'), Description: str(d, 'description'), Policies: links(d.policies) }),
  Fields: ({ draft, set }) => html`<div>
    <${Field} label="Name" name="name" required value=${draft.name} onInput=${set('name')} />
    <${Field} label="Description" name="description" value=${draft.description} onInput=${set('description')} />
    <${Field} label="Policies" name="policies" value=${draft.policies} onInput=${set('policies')} hint="Policy names, separated by commas" />
  </div>`,
};

function parseConfig(text: string): Record<string, unknown> {
  if (!text.trim()) return {};
  try {
    const config = JSON.parse(text) as unknown;
    if (typeof config === 'object' && config !== null && !Array.isArray(config)) return config as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new Error('Config must be a JSON object, e.g. {"JWKSURL": "https://…"}');
}

export const authMethodKind: AclKind<AuthMethod> = {
  slug: 'auth-methods',
  noun: 'auth method',
  title: 'Auth methods',
  listPath: '/v1/acl/auth-methods',
  createPath: '/v1/acl/auth-method',
  itemPath: (name) => `/v1/acl/auth-method/${name}`,
  id: (m) => m.Name,
  label: (m) => m.Name,
  columns: [
    ['Name', () => null],
    ['Type', (m) => m.Type],
    ['Display name', (m) => m.DisplayName || '—'],
    ['Token locality', (m) => m.TokenLocality || 'local'],
  ],
  draft: (m) => ({
    name: m?.Name ?? '',
    type: m?.Type ?? 'jwt',
    displayName: m?.DisplayName ?? '',
    description: m?.Description ?? '',
    maxTokenTTL: m?.MaxTokenTTL && m.MaxTokenTTL !== '0s' ? m.MaxTokenTTL : '',
    tokenLocality: m?.TokenLocality || 'local',
    config: JSON.stringify(m?.Config ?? {}, null, 2),
  }),
  body: (d) => ({
    Name: str(d, 'name'),
    Type: str(d, 'type'),
    DisplayName: str(d, 'displayName'),
    Description: str(d, 'description'),
    ...(str(d, 'maxTokenTTL') ? { MaxTokenTTL: str(d, 'maxTokenTTL') } : {}),
    TokenLocality: str(d, 'tokenLocality'),
    Config: parseConfig(String(d.config ?? '')),
  }),
  Fields: ({ draft, set, editing }) => html`<div>
    <div class="row">
      <${Field} label="Name" name="name" required disabled=${editing} value=${draft.name} onInput=${set('name')} />
      <${Select} label="Type" name="type" disabled=${editing} value=${draft.type} onInput=${set('type')} options=${[['jwt', 'jwt'], ['kubernetes', 'kubernetes']]} />
    </div>
    <div class="row">
      <${Field} label="Display name" name="displayName" value=${draft.displayName} onInput=${set('displayName')} />
      <${Field} label="Max token TTL" name="maxTokenTTL" value=${draft.maxTokenTTL} onInput=${set('maxTokenTTL')} hint="e.g. 1h; empty: no limit" />
      <${Select} label="Token locality" name="tokenLocality" value=${draft.tokenLocality} onInput=${set('tokenLocality')} options=${[['local', 'local'], ['global', 'global']]} />
    </div>
    <${Field} label="Description" name="description" value=${draft.description} onInput=${set('description')} />
    <${TextArea} label="Config" name="config" value=${draft.config} onInput=${set('config')} hint="The method's configuration as JSON (JWTValidationPubKeys, JWKSURL, BoundIssuer, ClaimMappings, …)" spellcheck="false" />
  </div>`,
};

export const bindingRuleKind: AclKind<BindingRule> = {
  slug: 'binding-rules',
  noun: 'binding rule',
  title: 'Binding rules',
  listPath: '/v1/acl/binding-rules',
  createPath: '/v1/acl/binding-rule',
  itemPath: (id) => `/v1/acl/binding-rule/${id}`,
  id: (r) => r.ID,
  label: (r) => r.Description || r.ID,
  columns: [
    ['Rule', () => null],
    ['Auth method', (r) => r.AuthMethod],
    ['Bind type', (r) => r.BindType],
    ['Bind name', (r) => html`<code>${r.BindName}</code>`],
    ['Selector', (r) => (r.Selector ? html`<code>${r.Selector}</code>` : 'all identities')],
  ],
  draft: (r) => ({
    authMethod: r?.AuthMethod ?? '',
    description: r?.Description ?? '',
    selector: r?.Selector ?? '',
    bindType: r?.BindType ?? 'service',
    bindName: r?.BindName ?? '',
  }),
  body: (d, r) => ({
    ...(r ? { ID: r.ID } : {}),
    AuthMethod: str(d, 'authMethod'),
    Description: str(d, 'description'),
    Selector: str(d, 'selector'),
    BindType: str(d, 'bindType'),
    BindName: str(d, 'bindName'),
  }),
  Fields: ({ draft, set, editing }) => html`<div>
    <div class="row">
      <${Field} label="Auth method" name="authMethod" required disabled=${editing} value=${draft.authMethod} onInput=${set('authMethod')} />
      <${Select} label="Bind type" name="bindType" value=${draft.bindType} onInput=${set('bindType')} options=${[['service', 'service'], ['node', 'node'], ['role', 'role']]} />
      <${Field} label="Bind name" name="bindName" required value=${draft.bindName} onInput=${set('bindName')} hint="A name or a template such as \${value.name}" />
    </div>
    <${Field} label="Description" name="description" value=${draft.description} onInput=${set('description')} />
    <${Field} label="Selector" name="selector" value=${draft.selector} onInput=${set('selector')} hint='e.g. value.team == "web"; empty: every identity' spellcheck="false" />
  </div>`,
};

export const ACL_KINDS = [tokenKind, policyKind, roleKind, authMethodKind, bindingRuleKind] as const;
