import { boxKind } from '../../src/reconcile/box';
import { boxProviderKind } from '../../src/reconcile/box-provider';
import { boxVersionKind } from '../../src/reconcile/box-version';
import { CATALOG_KINDS } from '../../src/reconcile/catalog-kinds';
import { kindOf } from '../../src/reconcile/index';
import { ResourceKind } from '../../src/reconcile/kind';
import { SECRETS_AD_KINDS } from '../../src/reconcile/secrets-ad-kinds';
import { SECRETS_DATABASE_KINDS } from '../../src/reconcile/secrets-database-kinds';
import { SECRETS_KINDS } from '../../src/reconcile/secrets-kinds';
import { SECRETS_KV_KINDS } from '../../src/reconcile/secrets-kv-kinds';
import { SECRETS_PKI_KINDS } from '../../src/reconcile/secrets-pki-kinds';
import { SECRETS_RABBITMQ_KINDS } from '../../src/reconcile/secrets-rabbitmq-kinds';
import { SECRETS_SSH_KINDS } from '../../src/reconcile/secrets-ssh-kinds';
import { SECRETS_TRANSFORM_KINDS } from '../../src/reconcile/secrets-transform-kinds';

// `hangar apply` loads the kinds' modules one after another until it finds the payload's kind.
test('every resource kind is found by name, and no two kinds share a name', () => {
  const all: readonly ResourceKind<any>[] = [
    boxKind, boxVersionKind, boxProviderKind, ...CATALOG_KINDS, ...SECRETS_KINDS, ...SECRETS_KV_KINDS, ...SECRETS_PKI_KINDS,
    ...SECRETS_DATABASE_KINDS, ...SECRETS_SSH_KINDS, ...SECRETS_TRANSFORM_KINDS, ...SECRETS_RABBITMQ_KINDS, ...SECRETS_AD_KINDS,
  ];
  expect(new Set(all.map((k) => k.kind)).size).toBe(all.length);
  for (const kind of all) expect(kindOf(kind.kind)).toBe(kind);
  expect(() => kindOf('registry.nope')).toThrow(/unknown resource kind "registry.nope"; known kinds: registry.box, .*secrets.ad-config/);
});
