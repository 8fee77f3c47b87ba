/// <reference lib="dom" />
import { useEffect, useState } from 'preact/hooks';
import type { Namespace } from './types';
import type { ApiClient } from '../shared/api';
import { Select } from '../shared/components';
import { html } from '../shared/html';
import { pathInMount } from '../shared/router';

/**
 * The namespace the catalog pages work in: `?ns=` in the page's URL (a shareable link) wins and is
 * remembered for the tab (sessionStorage, like the token); without it the remembered one, else
 * `default`. Every API call of a namespaced page carries it in X-Catalog-Namespace.
 */
const STORAGE_KEY = 'hangar.catalog.namespace';
export const DEFAULT_NAMESPACE = 'default';

function storage(): Storage | undefined {
  return typeof sessionStorage === 'undefined' ? undefined : sessionStorage;
}

/** The namespace of a page's URL (remembering it when the URL names one). */
export function currentNamespace(query: URLSearchParams): string {
  const fromUrl = query.get('ns')?.trim();
  if (fromUrl) {
    storage()?.setItem(STORAGE_KEY, fromUrl);
    return fromUrl;
  }
  return storage()?.getItem(STORAGE_KEY) || DEFAULT_NAMESPACE;
}

/** The client whose every request is made in `namespace`. */
export function inNamespace(api: ApiClient, namespace: string): ApiClient {
  return api.withHeaders({ 'X-Catalog-Namespace': namespace });
}

interface NamespaceBarProps {
  /** The client without a namespace (the list of namespaces is not in one). */
  readonly api: ApiClient;
  readonly current: string;
  readonly query: URLSearchParams;
  readonly navigate: (path: string) => void;
  readonly href: (path: string) => string;
}

/**
 * Chooses the namespace of the page: the ones the token may see (`/v1/namespaces`, filtered by the
 * API). Choosing one shows the same page in it, with `?ns=` in the URL.
 */
export function NamespaceBar({ api, current, query, navigate, href }: NamespaceBarProps) {
  const [names, setNames] = useState<readonly string[] | undefined>(undefined);
  useEffect(() => {
    let live = true;
    api.get<Namespace[]>('/v1/namespaces').then(
      (list) => live && setNames(list.filter((ns) => !ns.DeletedAt).map((ns) => ns.Name)),
      () => live && setNames([]), // a token that may list none still works in its own
    );
    return () => {
      live = false;
    };
  }, [api]);
  const options = [...new Set([...(names ?? []), current])].sort().map((n) => [n, n] as const);
  const choose = (ns: string) => {
    const next = new URLSearchParams(query);
    next.set('ns', ns);
    navigate(`${pathInMount(href('/'), location.pathname) ?? '/'}?${next.toString()}`);
  };
  return html`<div class="catalog-namespace-bar">
    <${Select} label="Namespace" name="ns" value=${current} options=${options} onInput=${choose} aria-busy=${names === undefined ? 'true' : undefined} />
  </div>`;
}
