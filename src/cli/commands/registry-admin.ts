import { CommandSpec, ParsedOptions } from '../options';
import { UsageError } from '../usage';
import { targetOptions, withRegistry } from './registry';

function onOff(value: string, what: string): boolean {
  if (value === 'on') return true;
  if (value === 'off') return false;
  throw new UsageError(`${what} must be "on" or "off", not "${value}"`);
}

export const setDelinquentCommand: CommandSpec = {
  name: 'registry set-delinquent',
  summary: 'Marks an owner delinquent on billing (its boxes answer 402 to changes and private downloads), or clears it.',
  usage: 'hangar registry set-delinquent NAME on|off [--data DIR | --address URL --token TOKEN]',
  positionals: ['name', 'state'],
  options: { ...targetOptions },
};

export const maintenanceCommand: CommandSpec = {
  name: 'registry maintenance',
  summary: 'Turns maintenance mode on (changes answer 503; reads go on) or off, for every server of the database.',
  usage: 'hangar registry maintenance on|off [--data DIR | --address URL --token TOKEN]',
  positionals: ['state'],
  options: { ...targetOptions },
};

export const twoFactorCommand: CommandSpec = {
  name: 'registry two-factor',
  summary: 'Turns two-factor login (codes by SMS through the configured notifier) on or off for a user.',
  usage: 'hangar registry two-factor USER on|off [--phone NUMBER] [--data DIR | --address URL --token TOKEN]',
  positionals: ['user', 'state'],
  options: { phone: { type: 'string', placeholder: 'NUMBER', help: 'The phone number codes go to' }, ...targetOptions },
};

export const addMemberCommand: CommandSpec = {
  name: 'registry add-member',
  summary: "Adds a user to an organization (or changes its role); members write the organization's boxes.",
  usage: 'hangar registry add-member ORG USER [--role member|owner] [--data DIR | --address URL --token TOKEN]',
  positionals: ['organization', 'user'],
  options: { role: { type: 'string', placeholder: 'ROLE', help: 'member (default) or owner (also manages members)' }, ...targetOptions },
};

export const removeMemberCommand: CommandSpec = {
  name: 'registry remove-member',
  summary: 'Removes a user from an organization.',
  usage: 'hangar registry remove-member ORG USER [--data DIR | --address URL --token TOKEN]',
  positionals: ['organization', 'user'],
  options: { ...targetOptions },
};

export async function runSetDelinquent(options: ParsedOptions, [name, state]: string[]): Promise<number> {
  const delinquent = onOff(state, 'the state');
  await withRegistry(options, (c) => c.updateOwner(name, { delinquent }));
  process.stdout.write(`${name} is ${delinquent ? 'now' : 'no longer'} delinquent\n`);
  return 0;
}

export async function runMaintenance(options: ParsedOptions, [state]: string[]): Promise<number> {
  const enabled = onOff(state, 'the state');
  await withRegistry(options, (c) => c.setMaintenance(enabled));
  process.stdout.write(`maintenance mode ${enabled ? 'on' : 'off'}\n`);
  return 0;
}

export async function runTwoFactor(options: ParsedOptions, [user, state]: string[]): Promise<number> {
  const on = onOff(state, 'the state');
  const phone = options.phone as string | undefined;
  await withRegistry(options, (c) => c.updateOwner(user, { two_factor: on ? 'sms' : false, ...(phone ? { phone } : {}) }));
  process.stdout.write(`two-factor login ${on ? 'on' : 'off'} for ${user}\n`);
  return 0;
}

export async function runAddMember(options: ParsedOptions, [organization, user]: string[]): Promise<number> {
  const role = (options.role as string | undefined) ?? 'member';
  if (role !== 'member' && role !== 'owner') throw new UsageError(`--role must be member or owner, not "${role}"`);
  await withRegistry(options, (c) => c.setMember(organization, user, role));
  process.stdout.write(`${user} is ${role === 'owner' ? 'an owner' : 'a member'} of ${organization}\n`);
  return 0;
}

export async function runRemoveMember(options: ParsedOptions, [organization, user]: string[]): Promise<number> {
  await withRegistry(options, (c) => c.removeMember(organization, user));
  process.stdout.write(`${user} is no longer a member of ${organization}\n`);
  return 0;
}
