/** The connection to a broker's management HTTP API, as `config/connection` stores it. */
export interface ManagementConnection {
  readonly connection_uri: string;
  readonly username: string;
  readonly password: string;
}

/** Permissions of a user in one virtual host (regular expressions on resource names). */
export interface VhostPermission {
  readonly configure: string;
  readonly write: string;
  readonly read: string;
}

/** Topic permissions of a user on one exchange of a virtual host. */
export interface TopicPermission {
  readonly write: string;
  readonly read: string;
}

/** A management API call that did not succeed; the message names the call and the broker's reason. */
export class ManagementError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ManagementError';
  }
}

const TIMEOUT_MS = 10_000;

/**
 * A small client of the RabbitMQ management API (the calls the public service's client library
 * makes: users, permissions, topic permissions). Path segments are percent-encoded, so the default
 * virtual host `/` travels as `%2F`, as the management API requires.
 */
export class ManagementClient {
  private readonly base: string;
  private readonly authorization: string;

  constructor(conn: ManagementConnection) {
    this.base = conn.connection_uri.replace(/\/+$/, '');
    this.authorization = `Basic ${Buffer.from(`${conn.username}:${conn.password}`).toString('base64')}`;
  }

  /** Lists users: the check of `verify_connection` (needs the administrator tag, as issuing does). */
  async listUsers(): Promise<unknown[]> {
    return (await this.call('GET', ['users'])) as unknown[];
  }

  async putUser(name: string, password: string, tags: string): Promise<void> {
    await this.call('PUT', ['users', name], { password, tags });
  }

  async putPermissions(vhost: string, user: string, p: VhostPermission): Promise<void> {
    await this.call('PUT', ['permissions', vhost, user], { configure: p.configure, write: p.write, read: p.read });
  }

  async putTopicPermissions(vhost: string, user: string, exchange: string, p: TopicPermission): Promise<void> {
    await this.call('PUT', ['topic-permissions', vhost, user], { exchange, write: p.write, read: p.read });
  }

  /** Deletes a user; a user already gone counts as deleted (revocation may run twice). */
  async deleteUser(name: string): Promise<void> {
    try {
      await this.call('DELETE', ['users', name]);
    } catch (err) {
      if (!(err instanceof ManagementError && err.status === 404)) throw err;
    }
  }

  private async call(method: 'GET' | 'PUT' | 'DELETE', segments: readonly string[], body?: unknown): Promise<unknown> {
    const path = segments.map(encodeURIComponent).join('/');
    const what = `${method} /api/${path}`;
    // Loaded on first use: a server without a RabbitMQ mount does not keep undici in memory.
    const { request } = require('undici') as typeof import('undici');
    let res;
    try {
      res = await request(`${this.base}/api/${path}`, {
        method,
        headers: { authorization: this.authorization, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        headersTimeout: TIMEOUT_MS,
        bodyTimeout: TIMEOUT_MS,
      });
    } catch (err) {
      throw new ManagementError(0, `${what}: ${(err as Error).message}`);
    }
    const text = await res.body.text();
    if (res.statusCode >= 200 && res.statusCode < 300) {
      try {
        return text ? JSON.parse(text) : undefined;
      } catch {
        throw new ManagementError(res.statusCode, `${what}: the answer is not JSON: is connection_uri the management API's address?`);
      }
    }
    // The broker's own reason (`{"error":"bad_request","reason":"vhost_or_user_not_found"}`), short.
    let reason = text.slice(0, 200);
    try {
      const parsed = JSON.parse(text) as { error?: string; reason?: string };
      reason = [parsed.error, parsed.reason].filter(Boolean).join(': ') || reason;
    } catch {
      // not JSON
    }
    throw new ManagementError(res.statusCode, `${what}: ${res.statusCode} ${reason}`);
  }
}
