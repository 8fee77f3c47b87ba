import { useState } from 'preact/hooks';
import { Checkbox, ErrorMessage, Field, TextArea } from '../../shared/components';
import { page, type PageProps } from '../../shared/console';
import { useAction } from '../../shared/hooks';
import { html } from '../../shared/html';
import { ADMINISTRATOR, boxPagePath, type Box } from '../types';

/** `/-/new`: create a box (for oneself or an organization one is a member of). */
export const newBoxPage = page({
  path: '/-/new',
  title: 'New box',
  signedIn: true,
  view: (props) => html`<${NewBox} ...${props} />`,
});

function NewBox(props: PageProps) {
  const suggested = props.query.get('owner') ?? (props.session?.name === ADMINISTRATOR ? '' : props.session?.name ?? '');
  const [owner, setOwner] = useState(suggested);
  const [name, setName] = useState('');
  const [short, setShort] = useState('');
  const [description, setDescription] = useState('');
  const [isPrivate, setPrivate] = useState(true);
  const action = useAction();
  const create = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const box = await props.api.post<Box>('/api/v2/boxes', {
        box: { username: owner.trim(), name: name.trim(), short_description: short, description, is_private: isPrivate },
      });
      props.navigate(boxPagePath(box.username, box.name));
    });
  };
  return html`<section>
    <h1>New box</h1>
    <form class="card" onSubmit=${create}>
      <div class="row">
        <${Field} label="Owner" hint="Your username or an organization's" name="owner" required value=${owner} onInput=${setOwner} />
        <${Field} label="Name" hint="Letters, digits, '.', '-' and '_'" name="name" required value=${name} onInput=${setName} />
      </div>
      <${Field} label="Short description" name="short_description" value=${short} onInput=${setShort} />
      <${TextArea} label="Description" hint="Markdown" name="description" value=${description} onInput=${setDescription} />
      <${Checkbox} label="Private (only the owner and its members see it)" name="private" checked=${isPrivate} onChange=${setPrivate} />
      <${ErrorMessage} messages=${action.error} />
      <button type="submit" disabled=${action.busy}>Create box</button>
    </form>
  </section>`;
}
