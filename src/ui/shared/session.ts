/**
 * Sign-in state of one console: the token (and who it belongs to) in sessionStorage, so it lives as
 * long as the tab and never reaches a cookie, a URL or a log. Server-side rendering has no session.
 */
export interface Session {
  readonly token: string;
  /** Shown in the header: the user name, the token's display name, ... */
  readonly name: string;
  /** The console created this token by signing in (a password login): signing out may delete it. */
  readonly created?: boolean;
}

type Listener = (session: Session | undefined) => void;

export class SessionStore {
  private readonly key: string;
  private readonly listeners = new Set<Listener>();

  constructor(service: string) {
    this.key = `hangar.${service}.session`;
  }

  get(): Session | undefined {
    const storage = sessionStore();
    const raw = storage?.getItem(this.key);
    if (!raw) return undefined;
    try {
      const parsed = JSON.parse(raw) as Session;
      return typeof parsed.token === 'string' && parsed.token ? parsed : undefined;
    } catch {
      return undefined;
    }
  }

  set(session: Session): void {
    sessionStore()?.setItem(this.key, JSON.stringify(session));
    this.emit();
  }

  clear(): void {
    sessionStore()?.removeItem(this.key);
    this.emit();
  }

  /** Calls `listener` on every sign-in and sign-out; returns the function that stops it. */
  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(): void {
    const session = this.get();
    for (const listener of this.listeners) listener(session);
  }
}

function sessionStore(): Storage | undefined {
  return typeof sessionStorage === 'undefined' ? undefined : sessionStorage;
}
