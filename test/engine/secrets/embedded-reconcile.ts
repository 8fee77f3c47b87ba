import { openTransport } from '../../../src/client/open';
import { SecretsClient } from '../../../src/client/secrets';
import { PAYLOAD_VERSION, ResourcePayload } from '../../../src/reconcile/payload-format';
import { tempDir } from '../../helpers/storage';

/**
 * Reconcile payloads for an embedded engine on a fresh data directory (the CLI's in-process mode),
 * and a secrets client on the same directory to check what the kinds did. `kindPrefix` is put
 * before each payload's kind (e.g. 'secrets.ssh-').
 */
export function embeddedSecrets(kindPrefix = '') {
  const dataDir = tempDir();
  const payload = (kind: string, key: string, desired?: Record<string, unknown>): ResourcePayload => ({
    v: PAYLOAD_VERSION,
    kind: `${kindPrefix}${kind}`,
    key,
    connection: { dataDir },
    ...(desired ? { desired } : {}),
  });
  const secrets = async <T>(fn: (c: SecretsClient) => Promise<T>): Promise<T> => {
    const transport = await openTransport({ dataDir });
    try {
      return await fn(new SecretsClient(transport));
    } finally {
      await transport.close();
    }
  };
  return { dataDir, payload, secrets };
}
