/**
 * A provider session opened on a tool's first use and closed when the run
 * ends, so an agent that never browses never starts a browser.
 */
export function lazySession(
  open: () => Promise<string>,
  close: (id: string) => Promise<unknown>,
  defer: (fn: () => Promise<unknown>) => void,
): () => Promise<string> {
  let pending: Promise<string> | undefined;
  return () => {
    if (!pending) {
      pending = open();
      defer(async () => {
        const id = await pending!.catch(() => undefined);
        if (id) await close(id).catch(() => undefined);
      });
    }
    return pending;
  };
}
