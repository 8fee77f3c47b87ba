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

/**
 * The submit handler of a form that saves something under a name: the name is trimmed and required
 * (an empty one fails the action with "name is required"), then `save` runs as the form's action.
 */
export function namedSubmit(action: Action, name: string, save: (name: string) => Promise<void>): (e: Event) => void {
  return (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const target = name.trim();
      if (!target) throw new Error('name is required');
      await save(target);
    });
  };
}

export function messagesOf(err: unknown): readonly string[] {
  if (err instanceof ApiError) return err.messages;
  return [err instanceof Error ? err.message : String(err)];
}
