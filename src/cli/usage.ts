/** A mistake in how a command was called: exit code 2, with a hint at --help. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
