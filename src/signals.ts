/**
 * In-process notifications after a commit: caches on this node drop what changed at once.
 * Other nodes hear the same changes through the change feed (src/changes/feed.ts: triggers NOTIFY
 * from the writing transaction), which the node's runtime turns into these signals; the caches' short
 * TTL (src/releases/live.ts) remains as a safety net.
 */
type Listener = (id: string) => void;

export type Signals = {
  appChanged(appId: string): void;
  secretsChanged(appId: string): void;
  /** The account's plan, billing access or flags changed (every app of it may serve differently). */
  accountChanged(accountId: string): void;
  /** A slug or custom domain was added, changed or removed (by hostname). */
  routeChanged(hostname: string): void;
  onRouteChanged(fn: Listener): void;
  onAppChanged(fn: Listener): void;
  onSecretsChanged(fn: Listener): void;
  onAccountChanged(fn: Listener): void;
};

export function createSignals(): Signals {
  const app: Listener[] = [];
  const secrets: Listener[] = [];
  const account: Listener[] = [];
  const route: Listener[] = [];
  return {
    routeChanged: (h) => route.forEach((fn) => fn(h)),
    onRouteChanged: (fn) => void route.push(fn),
    appChanged: (id) => app.forEach((fn) => fn(id)),
    secretsChanged: (id) => secrets.forEach((fn) => fn(id)),
    accountChanged: (id) => account.forEach((fn) => fn(id)),
    onAppChanged: (fn) => void app.push(fn),
    onSecretsChanged: (fn) => void secrets.push(fn),
    onAccountChanged: (fn) => void account.push(fn),
  };
}
