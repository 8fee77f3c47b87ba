import { ApiError } from './errors';
import { ApiResponse, Transport } from './transport';

/** Typed client of the secrets API. */
export class SecretsClient {
  constructor(
    private readonly transport: Transport,
    private readonly token?: string,
  ) {}

  /** The same client acting with another token. */
  withToken(token: string): SecretsClient {
    return new SecretsClient(this.transport, token);
  }

  /** One request; throws ApiError unless the status is one of `ok`. */
  protected async call<T>(method: string, path: string, body?: unknown, ok = [200, 204]): Promise<T> {
    const res: ApiResponse = await this.transport.request('secrets', method, path, { body, token: this.token });
    if (!ok.includes(res.status)) throw ApiError.from(res);
    return res.body as T;
  }
}
