import { useRef, useState } from 'preact/hooks';
import { boxApiPath, type Box, type Provider, type Version } from './types';
import { ApiClient, ApiError, errorMessages } from '../shared/api';
import { Checkbox, ErrorMessage, Field, Select, TextArea } from '../shared/components';
import { formatBytes } from '../shared/format';
import { useAction } from '../shared/hooks';
import { html } from '../shared/html';
import { uploadFile } from '../shared/upload';

/** What an owner's forms need: the API with the owner's token, the box, and a way to show the change. */
export interface OwnerProps {
  readonly api: ApiClient;
  readonly box: Box;
  readonly onChange: () => void;
}

const CHECKSUM_TYPES = [
  ['', 'none'],
  ['sha256', 'sha256'],
  ['sha512', 'sha512'],
  ['sha384', 'sha384'],
  ['sha1', 'sha1'],
  ['md5', 'md5'],
] as const;

export function versionApiPath(box: Box, version: string): string {
  return `${boxApiPath(box.username, box.name)}/version/${encodeURIComponent(version)}`;
}

export function providerApiPath(box: Box, version: string, provider: Provider): string {
  return `${versionApiPath(box, version)}/provider/${encodeURIComponent(provider.name)}/${encodeURIComponent(provider.architecture)}`;
}

function submitting(action: ReturnType<typeof useAction>, fn: () => Promise<unknown>) {
  return (e: Event) => {
    e.preventDefault();
    void action.run(fn);
  };
}

/** A <details> that folds itself after its form succeeded (its `open` is the user's, not state). */
function useFolding() {
  const ref = useRef<HTMLDetailsElement>(null);
  return { ref, fold: () => ref.current && (ref.current.open = false) };
}

/** Short description, description (Markdown) and privacy of the box. */
export function EditBoxForm({ api, box, onChange }: OwnerProps) {
  const [short, setShort] = useState(box.short_description);
  const [description, setDescription] = useState(box.description_markdown);
  const [isPrivate, setPrivate] = useState(box.private);
  const action = useAction();
  const folding = useFolding();
  const save = submitting(action, async () => {
    await api.put(boxApiPath(box.username, box.name), { box: { short_description: short, description, is_private: isPrivate } });
    folding.fold();
    onChange();
  });
  return html`<details class="card owner-tool" ref=${folding.ref}>
    <summary>Edit box</summary>
    <form onSubmit=${save}>
      <${Field} label="Short description" name="short_description" value=${short} onInput=${setShort} />
      <${TextArea} label="Description" hint="Markdown" name="description" value=${description} onInput=${setDescription} />
      <${Checkbox} label="Private (only the owner and its members see it)" name="private" checked=${isPrivate} onChange=${setPrivate} />
      <${ErrorMessage} messages=${action.error} />
      <button type="submit" disabled=${action.busy}>Save box</button>
    </form>
  </details>`;
}

/** A new (unreleased) version. */
export function NewVersionForm({ api, box, onChange }: OwnerProps) {
  const [version, setVersion] = useState('');
  const [description, setDescription] = useState('');
  const action = useAction();
  const folding = useFolding();
  const create = submitting(action, async () => {
    await api.post(`${boxApiPath(box.username, box.name)}/versions`, { version: { version: version.trim(), description } });
    setVersion('');
    setDescription('');
    folding.fold();
    onChange();
  });
  return html`<details class="card owner-tool" ref=${folding.ref}>
    <summary>New version</summary>
    <form onSubmit=${create}>
      <${Field} label="Version number" hint="MAJOR.MINOR.PATCH, e.g. 1.2.0" name="version" required value=${version} onInput=${setVersion} />
      <${TextArea} label="Release notes" hint="Markdown" name="description" value=${description} onInput=${setDescription} />
      <${ErrorMessage} messages=${action.error} />
      <button type="submit" disabled=${action.busy}>Create version</button>
    </form>
  </details>`;
}

/** Release or revoke a version, edit its notes, add a provider. */
export function VersionTools({ api, box, onChange, version }: OwnerProps & { version: Version }) {
  const [notes, setNotes] = useState(version.description_markdown);
  const action = useAction();
  const path = versionApiPath(box, version.version);
  const put = (suffix: string, body?: unknown) => () =>
    void action.run(async () => {
      await api.put(`${path}${suffix}`, body);
      onChange();
    });
  const saveNotes = submitting(action, async () => {
    await api.put(path, { version: { description: notes } });
    onChange();
  });
  return html`<div class="owner-tools">
    <div class="actions">
      ${version.status !== 'active' && html`<button type="button" onClick=${put('/release')} disabled=${action.busy}>Release ${version.version}</button>`}
      ${version.status === 'active' && html`<button type="button" class="danger" onClick=${put('/revoke')} disabled=${action.busy}>Revoke ${version.version}</button>`}
    </div>
    <${ErrorMessage} messages=${action.error} />
    <details class="owner-tool">
      <summary>Edit release notes of ${version.version}</summary>
      <form onSubmit=${saveNotes}>
        <${TextArea} label=${`Release notes of ${version.version}`} hint="Markdown" name="description" value=${notes} onInput=${setNotes} />
        <button type="submit" disabled=${action.busy}>Save notes</button>
      </form>
    </details>
    <${NewProviderForm} api=${api} box=${box} onChange=${onChange} version=${version} />
  </div>`;
}

function NewProviderForm({ api, box, onChange, version }: OwnerProps & { version: Version }) {
  const [name, setName] = useState('');
  const [architecture, setArchitecture] = useState('');
  const [url, setUrl] = useState('');
  const [checksumType, setChecksumType] = useState('');
  const [checksum, setChecksum] = useState('');
  const action = useAction();
  const folding = useFolding();
  const create = submitting(action, async () => {
    await api.post(`${versionApiPath(box, version.version)}/providers`, {
      provider: {
        name: name.trim(),
        architecture: architecture.trim() || undefined,
        url: url.trim() || undefined,
        checksum_type: checksumType || undefined,
        checksum: checksum.trim() || undefined,
      },
    });
    for (const clear of [setName, setArchitecture, setUrl, setChecksumType, setChecksum]) clear('');
    folding.fold();
    onChange();
  });
  return html`<details class="owner-tool" ref=${folding.ref}>
    <summary>Add a provider to ${version.version}</summary>
    <form onSubmit=${create}>
      <div class="row">
        <${Field} label="Provider" hint="virtualbox, libvirt, vmware_desktop, ..." name="provider" required value=${name} onInput=${setName} />
        <${Field} label="Architecture" hint="amd64, arm64, ... (empty: the server's default)" name="architecture" value=${architecture} onInput=${setArchitecture} />
      </div>
      <${Field} label="External URL" hint="Only for a box file hosted elsewhere; leave empty to upload it here" name="url" type="url" value=${url} onInput=${setUrl} />
      <div class="row">
        <${Select} label="Checksum type" name="checksum_type" value=${checksumType} options=${CHECKSUM_TYPES} onInput=${setChecksumType} />
        <${Field} label="Checksum" name="checksum" value=${checksum} onInput=${setChecksum} />
      </div>
      <${ErrorMessage} messages=${action.error} />
      <button type="submit" disabled=${action.busy}>Add provider</button>
    </form>
  </details>`;
}

/** Upload a box file for a provider, streamed, with a progress bar. */
export function UploadForm({ api, box, onChange, version, provider }: OwnerProps & { version: Version; provider: Provider }) {
  const [file, setFile] = useState<File | undefined>(undefined);
  const [progress, setProgress] = useState<{ sent: number; total: number } | undefined>(undefined);
  const action = useAction();
  const label = `${provider.name} (${provider.architecture}) of ${version.version}`;
  const upload = submitting(action, async () => {
    if (!file) throw new Error('Choose a box file first');
    const target = await api.get<{ upload_path: string }>(`${providerApiPath(box, version.version, provider)}/upload`);
    setProgress({ sent: 0, total: file.size });
    const res = await uploadFile(target.upload_path, file, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream' },
      onProgress: (sent, total) => setProgress({ sent, total }),
    });
    if (res.status < 200 || res.status > 299) throw new ApiError(res.status, errorMessages(res.status, res.text).messages);
    onChange();
  });
  return html`<form class="upload" onSubmit=${upload} aria-label=${`Upload the box file of ${label}`}>
    <div class="field">
      <label for=${`file-${version.version}-${provider.name}-${provider.architecture}`}>Box file for ${label}</label>
      <input
        id=${`file-${version.version}-${provider.name}-${provider.architecture}`}
        type="file"
        accept=".box,application/octet-stream"
        onChange=${(e: Event) => setFile((e.currentTarget as HTMLInputElement).files?.[0])}
      />
    </div>
    ${progress &&
    html`<p>
      <progress max=${progress.total || 1} value=${progress.sent} aria-label=${`Upload progress of ${label}`}></progress>
      <span class="muted">${formatBytes(progress.sent)} of ${formatBytes(progress.total)}</span>
    </p>`}
    <${ErrorMessage} messages=${action.error} />
    <button type="submit" disabled=${action.busy || !file}>Upload</button>
  </form>`;
}

/** Change a provider's external URL or checksum (a new checksum applies to the next upload). */
export function EditProviderForm({ api, box, onChange, version, provider }: OwnerProps & { version: Version; provider: Provider }) {
  const [url, setUrl] = useState(provider.original_url ?? '');
  const [checksumType, setChecksumType] = useState(provider.checksum_type ?? '');
  const [checksum, setChecksum] = useState(provider.checksum ?? '');
  const action = useAction();
  const folding = useFolding();
  const label = `${provider.name} (${provider.architecture}) of ${version.version}`;
  const save = submitting(action, async () => {
    await api.put(providerApiPath(box, version.version, provider), {
      provider: { url: url.trim(), checksum_type: checksumType, checksum: checksum.trim() },
    });
    folding.fold();
    onChange();
  });
  return html`<details class="owner-tool" ref=${folding.ref}>
    <summary>Edit provider ${label}</summary>
    <form onSubmit=${save}>
      <${Field} label=${`External URL of ${label}`} hint="Empty for a box file uploaded here" name="url" type="url" value=${url} onInput=${setUrl} />
      <div class="row">
        <${Select} label=${`Checksum type of ${label}`} name="checksum_type" value=${checksumType} options=${CHECKSUM_TYPES} onInput=${setChecksumType} />
        <${Field} label=${`Checksum of ${label}`} name="checksum" value=${checksum} onInput=${setChecksum} />
      </div>
      <${ErrorMessage} messages=${action.error} />
      <button type="submit" disabled=${action.busy}>Save provider</button>
    </form>
  </details>`;
}
