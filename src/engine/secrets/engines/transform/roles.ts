import { z } from 'zod';
import { listRoute, objectRoute, writableName } from './objects';
import { commaList } from '../../core/durations';
import { EngineRoute, SecretsRequest } from '../../core/types';

export interface Role {
  readonly transformations: string[];
}

const RoleBody = z.object({ transformations: commaList.nullish() });

/** Roles name the transformations they may use; a transformation must also allow the role. */
export const roleRoutes: EngineRoute[] = [
  listRoute('role'),
  objectRoute<Role>({
    kind: 'role',
    pattern: 'role/:name',
    body: RoleBody,
    show: (r) => ({ transformations: r.transformations }),
    write: async (req: SecretsRequest<z.infer<typeof RoleBody>>) => {
      const name = writableName('role', req.params.name);
      const old = await req.store.get<Role>(`role/${name}`);
      await req.store.put(`role/${name}`, { transformations: req.body.transformations ?? old?.transformations ?? [] } satisfies Role);
      return undefined;
    },
  }),
];
