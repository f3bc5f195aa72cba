import { createApi } from '../api.ts';
import { resolveAppId } from '../app-link.ts';
import { devTarget } from '../dev/target.ts';
import { c, CliError, printJson } from '../output.ts';

/** `platform jobs run <job_name> [--payload JSON]`: run a declared job of the live release now. */
export async function jobsRun(
  jobName: string,
  opts: { app?: string; payload?: string; json?: boolean; dev?: boolean },
): Promise<void> {
  let payload: unknown;
  if (opts.payload !== undefined) {
    try {
      payload = JSON.parse(opts.payload);
    } catch (err) {
      throw new CliError(
        `--payload is not valid JSON: ${(err as Error).message}`,
        'invalid_payload',
        undefined,
        `Quote it for the shell: --payload '{"n": 1}'`,
      );
    }
  }
  const { api, appId } = opts.dev
    ? await devTarget()
    : { api: await createApi(), appId: await resolveAppId(opts.app) };
  const r = await api.request('POST /v0/apps/{app_id}/jobs/{job_name}/runs', {
    params: { app_id: appId, job_name: jobName },
    body: payload === undefined ? {} : { payload },
  });
  if (opts.json) return printJson(r);
  process.stdout.write(
    `${c.green('✔ queued')} ${c.bold(r.job_name)}  ${r.job_id}  ${c.dim(`(release ${r.release_id}, up to ${r.max_attempts} attempts)`)}\n`,
  );
  process.stdout.write(
    `${c.dim('Its outcome:')} platform events --type job.succeeded   ${c.dim('(or job.failed, job.retry)')}\n`,
  );
}
