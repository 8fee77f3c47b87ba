import { useEffect, useState } from 'preact/hooks';
import type { ApiClient } from '../../shared/api';
import { ErrorMessage, Facts, Field, Select } from '../../shared/components';
import type { PageProps } from '../../shared/console';
import { useAction } from '../../shared/hooks';
import { html } from '../../shared/html';
import { ConfirmButton, Table } from '../components';
import { formatClock, formatNanos, parseDuration } from '../duration';
import { type Live, readLive, type Source, useLive } from '../live';
import { catalogPage } from '../page';
import type { Session } from '../types';

const SESSIONS: Source<Session[]> = { path: '/v1/session/list' };

/**
 * When this tab last knew a session's TTL to start: when it first saw the session, or renewed it.
 * The API does not tell when a session was last renewed, so the countdown is this tab's view.
 */
const ttlStarts = new Map<string, number>();

function ttlStart(id: string): number {
  let start = ttlStarts.get(id);
  if (start === undefined) ttlStarts.set(id, (start = Date.now()));
  return start;
}

/** The time left of a TTL, ticking every second. */
function Countdown({ session }: { session: Session }) {
  const ttl = parseDuration(session.TTL);
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    if (ttl === undefined) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [ttl]);
  if (ttl === undefined) return html`<span class="muted">no TTL</span>`;
  const left = ttlStart(session.ID) + ttl - now;
  return left > 0
    ? html`<span class="catalog-countdown" data-session=${session.ID}>${formatClock(left)}</span>`
    : html`<span class="badge warn">renewal due</span>`;
}

/** Renew (with a TTL) and destroy buttons of one session. */
function SessionActions({ api, session, onDestroyed }: { api: ApiClient; session: Session; onDestroyed?: () => void }) {
  const action = useAction();
  const [, setRenewed] = useState(0);
  const id = encodeURIComponent(session.ID);
  const renew = () =>
    void action.run(async () => {
      await api.put(`/v1/session/renew/${id}`);
      ttlStarts.set(session.ID, Date.now());
      setRenewed((n) => n + 1);
    });
  const destroy = () =>
    void action.run(async () => {
      await api.put(`/v1/session/destroy/${id}`);
      onDestroyed?.();
    });
  const name = session.Name || session.ID;
  return html`<div class="actions">
    ${session.TTL && html`<button type="button" class="secondary" disabled=${action.busy} onClick=${renew} aria-label=${`Renew ${name}`}>Renew</button>`}
    <${ConfirmButton} label=${`Destroy ${name}`} text="Destroy" confirmLabel="Confirm destroy" action=${action} onConfirm=${destroy} />
    <${ErrorMessage} messages=${action.error} />
  </div>`;
}

/** `/sessions`: every session with its node, behaviour and TTL countdown; create, renew, destroy. */
export const sessionsPage = catalogPage({
  path: '/sessions',
  title: 'Sessions',
  load: ({ api }) => readLive(api, SESSIONS),
  view: (props: PageProps<Live<Session[]>>) => html`<${SessionsView} ...${props} />`,
});

function SessionsView({ api, data, href }: PageProps<Live<Session[]>>) {
  const sessions = useLive(api, SESSIONS, data);
  return html`<section>
    <h1>Sessions</h1>
    <p class="lead">
      Sessions hold locks on keys. A session with a TTL is invalidated when it is not renewed in time; the countdown runs from
      when this page first saw it or last renewed it.
    </p>
    <${Table} caption="Sessions" headers=${['Session', 'Node', 'Behavior', 'TTL', 'Time left', 'Lock delay', 'Actions']} empty="No sessions.">
      ${sessions.map(
        (s) => html`<tr key=${s.ID}>
          <td><a href=${href(`/sessions/${encodeURIComponent(s.ID)}`)}>${s.Name || s.ID}</a></td>
          <td><a href=${href(`/nodes/${encodeURIComponent(s.Node)}`)}>${s.Node}</a></td>
          <td>${s.Behavior}</td>
          <td>${s.TTL || '—'}</td>
          <td><${Countdown} session=${s} /></td>
          <td>${formatNanos(s.LockDelay)}</td>
          <td><${SessionActions} api=${api} session=${s} /></td>
        </tr>`,
      )}
    <//>
    <${NewSession} api=${api} />
  </section>`;
}

function NewSession({ api }: { api: ApiClient }) {
  const [form, setForm] = useState({ name: '', node: '', ttl: '', behavior: 'release', lockDelay: '' });
  const set = (name: keyof typeof form) => (value: string) => setForm({ ...form, [name]: value });
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      await api.put('/v1/session/create', {
        Name: form.name,
        Node: form.node,
        Behavior: form.behavior,
        ...(form.ttl ? { TTL: form.ttl } : {}),
        ...(form.lockDelay ? { LockDelay: form.lockDelay } : {}),
      });
      setForm({ ...form, name: '' });
    });
  };
  return html`<form class="card" onSubmit=${submit} aria-labelledby="new-session">
    <h2 id="new-session">New session</h2>
    <div class="row">
      <${Field} label="Name" name="name" value=${form.name} onInput=${set('name')} />
      <${Field} label="Node" name="node" required value=${form.node} onInput=${set('node')} hint="A registered node" />
      <${Field} label="TTL" name="ttl" value=${form.ttl} onInput=${set('ttl')} hint="10s to 24h, e.g. 30s; empty: none" />
      <${Field} label="Lock delay" name="lockDelay" value=${form.lockDelay} onInput=${set('lockDelay')} hint="Default 15s" />
      <${Select} label="Behavior" name="behavior" value=${form.behavior} onInput=${set('behavior')} options=${[['release', 'release'], ['delete', 'delete']]} />
    </div>
    <${ErrorMessage} messages=${action.error} />
    <button type="submit" disabled=${action.busy}>Create session</button>
  </form>`;
}

const sessionInfo = (id: string): Source<Session[]> => ({ path: `/v1/session/info/${encodeURIComponent(id)}` });

/** `/sessions/:id`: one session (the KV pages link a lock's holder here). */
export const sessionPage = catalogPage({
  path: '/sessions/:id',
  title: ({ params }) => `Session ${params.id}`,
  load: ({ api, params }) => readLive(api, sessionInfo(params.id)),
  view: (props: PageProps<Live<Session[]>>) => html`<${SessionView} ...${props} />`,
});

function SessionView({ api, data, params, href, navigate }: PageProps<Live<Session[]>>) {
  const [session] = useLive(api, sessionInfo(params.id), data);
  if (!session) {
    return html`<section>
      <h1>Session ${params.id}</h1>
      <p role="status">This session does not exist (any more): it was destroyed or invalidated. <a href=${href('/sessions')}>All sessions</a>.</p>
    </section>`;
  }
  return html`<section>
    <h1>Session ${session.Name || session.ID}</h1>
    <${Facts}
      items=${[
        ['ID', html`<code>${session.ID}</code>`],
        ['Node', html`<a href=${href(`/nodes/${encodeURIComponent(session.Node)}`)}>${session.Node}</a>`],
        ['Behavior', session.Behavior],
        ['TTL', session.TTL || '—'],
        ['Time left', html`<${Countdown} session=${session} />`],
        ['Lock delay', formatNanos(session.LockDelay)],
        ['Node checks', (session.NodeChecks ?? []).join(', ') || '—'],
      ]}
    />
    <${SessionActions} api=${api} session=${session} onDestroyed=${() => navigate('/sessions')} />
  </section>`;
}
