/**
 * In-process notifications after a commit: caches on this node drop what changed at once.
 * Other nodes revalidate on a short TTL (src/releases/live.ts), so no cross-node bus is needed.
 */
type Listener = (appId: string) => void;

export type Signals = {
  appChanged(appId: string): void;
  secretsChanged(appId: string): void;
  onAppChanged(fn: Listener): void;
  onSecretsChanged(fn: Listener): void;
};

export function createSignals(): Signals {
  const app: Listener[] = [];
  const secrets: Listener[] = [];
  return {
    appChanged: (id) => app.forEach((fn) => fn(id)),
    secretsChanged: (id) => secrets.forEach((fn) => fn(id)),
    onAppChanged: (fn) => void app.push(fn),
    onSecretsChanged: (fn) => void secrets.push(fn),
  };
}
