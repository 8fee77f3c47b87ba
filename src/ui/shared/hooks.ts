import { useCallback, useRef, useState } from 'preact/hooks';
import { ApiError } from './api';

export interface Action {
  readonly busy: boolean;
  /** The failure's messages (an ApiError's envelope messages), shown with ErrorMessage. */
  readonly error: readonly string[] | undefined;
  /** Runs `fn` unless one runs already; resolves to its result, or undefined when it failed. */
  run<T>(fn: () => Promise<T>): Promise<T | undefined>;
  clearError(): void;
}

/** The state of a button's or a form's work: busy while it runs, its error after. */
export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<readonly string[] | undefined>(undefined);
  const running = useRef(false);
  const run = useCallback(async <T>(fn: () => Promise<T>): Promise<T | undefined> => {
    if (running.current) return undefined;
    running.current = true;
    setBusy(true);
    setError(undefined);
    try {
      return await fn();
    } catch (err) {
      setError(messagesOf(err));
      return undefined;
    } finally {
      running.current = false;
      setBusy(false);
    }
  }, []);
  return { busy, error, run, clearError: () => setError(undefined) };
}

export function messagesOf(err: unknown): readonly string[] {
  if (err instanceof ApiError) return err.messages;
  return [err instanceof Error ? err.message : String(err)];
}
