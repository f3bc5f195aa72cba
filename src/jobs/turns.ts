/**
 * Turns between apps in the one job queue every app shares. graphile-worker takes due jobs by
 * (priority, run_at, id), so with one priority the queue is first in, first out: an app that enqueues
 * ten thousand jobs puts every other app's jobs, and the platform's own tasks, behind all of them.
 * Each app job is therefore added with a priority (lower runs first) that grows with how many jobs its
 * app added recently on this node: log2 of a count that halves every minute. An app adding a job
 * now and then stays at 0, beside the platform's tasks; a burst's first job is at 0, its next two at 1,
 * the next four at 2, the next eight at 3, so another app's job waits for at most a few of them. Nothing
 * is held back when the queue has room (the order changes, not the rate), and within one burst an
 * app's jobs keep their order. Counts are per node: several nodes each give a burst its turns.
 */

/** How fast a count fades: it halves every minute. */
const HALF_LIFE_MS = 60_000;
/** Apps remembered at once; past it the faded ones are forgotten. */
const MAX_APPS = 10_000;

export type JobTurns = { priorityFor(appId: string, now?: number): number };

export function createJobTurns(): JobTurns {
  const counts = new Map<string, { n: number; at: number }>();
  return {
    priorityFor(appId: string, now = Date.now()): number {
      const c = counts.get(appId);
      const n = c ? c.n * 0.5 ** ((now - c.at) / HALF_LIFE_MS) : 0;
      if (!c && counts.size >= MAX_APPS) {
        for (const [id, e] of counts)
          if (e.n * 0.5 ** ((now - e.at) / HALF_LIFE_MS) < 1) counts.delete(id);
        if (counts.size >= MAX_APPS) counts.delete(counts.keys().next().value!);
      }
      counts.set(appId, { n: n + 1, at: now });
      return Math.floor(Math.log2(n + 1));
    },
  };
}

/** This process's turns (the queue is shared by every app a node serves). */
export const jobTurns = createJobTurns();
