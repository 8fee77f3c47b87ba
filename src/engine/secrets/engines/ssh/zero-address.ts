import { z } from 'zod';
import { commaString, items, readRole, readZeroAddress, writeZeroAddress } from './roles';
import { badInput } from '../../core/request';
import { EngineRoute } from '../../core/types';

const Body = z.object({ roles: commaString.optional() });

/** `config/zeroaddress`. */
export const zeroAddressRoutes: EngineRoute[] = [
  {
    pattern: 'config/zeroaddress',
    body: Body,
    read: async (req) => ({ data: { roles: await readZeroAddress(req.store) } }),
    write: async (req) => {
      const given = (req.body as z.infer<typeof Body>).roles;
      if (given === undefined) throw badInput('roles is required: comma-separated role names');
      const roles = [...new Set(items(given))];
      if (!roles.length) throw badInput('roles: give at least one role name');
      for (const name of roles) if (!(await readRole(req, name))) throw badInput(`roles: role "${name}" does not exist`);
      await writeZeroAddress(req.store, roles);
      return undefined;
    },
    delete: async (req) => {
      await writeZeroAddress(req.store, []);
      return undefined;
    },
  },
];
