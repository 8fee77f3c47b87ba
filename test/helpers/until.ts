/**
 * Polls `check` until it holds. No timings in asserts: the deadline only bounds a hang, and the
 * error names what never happened (plus `detail()`, such as a server's output).
 */
export async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  options: { ms?: number; detail?: () => string } = {},
): Promise<void> {
  const deadline = Date.now() + (options.ms ?? 45_000);
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${options.detail ? `\n${options.detail()}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
