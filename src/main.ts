/**
 * `npm start`: the whole service in one process on Node. With no DATABASE_URL it starts the
 * embedded Postgres; PLATFORM_ROLE=api or worker runs one half only.
 */
import { boot } from './boot.ts';
import { type Config, configOrExit, publicUrl } from './config.ts';
import type { Db } from './db/database.ts';
import { createLogger } from './logger.ts';
import { startService, type Service } from './service.ts';

async function main(): Promise<void> {
  const config = configOrExit(process.env);
  // Whoever reads the output may go away (a supervisor or terminal that died): every write then
  // fails with EPIPE, and each failure logged would raise the next, a loop that starves the process
  // of its timers and signals. Instead it goes quiet and stops as on a signal: a broken pipe ends a
  // program by default (SIGPIPE, which Node ignores), and nothing would show what it does next.
  let outputGone = false;
  const write = (stream: NodeJS.WriteStream, text: string) => {
    if (!outputGone) stream.write(text);
  };
  const log = createLogger(config.logLevel, (line) => write(process.stderr, line + '\n'));

  // Signals are taken from the first moment: one that arrives while Postgres is starting stops the
  // service as soon as it is up, never leaving the cluster behind.
  let stop: ((reason: string, code: number) => Promise<void>) | undefined;
  let requested: string | undefined;
  let firstSignalAt = 0;
  let hurry: () => void = () => {};
  /** Stops on the first signal, or for another reason (output closed, parent gone) as a first signal would. */
  const stopFor = (reason: string) => {
    if (firstSignalAt) return; // already stopping
    firstSignalAt = Date.now();
    requested = reason;
    void stop?.(reason, 0);
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (!firstSignalAt) return stopFor(signal);
    // npm forwards the signal its process group also received: the same stop, delivered twice.
    if (Date.now() - firstSignalAt < 1000) return;
    log.warn('second signal: closing open connections now; Postgres still stops last', { signal });
    hurry();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const onOutputError = () => {
    if (outputGone) return;
    outputGone = true;
    stopFor('output closed');
  };
  process.stdout.on('error', onOutputError);
  process.stderr.on('error', onOutputError);
  if (config.exitWithParent) {
    // A parent killed outright (SIGKILL) cannot stop its children; a child re-parented notices.
    const parent = process.ppid;
    setInterval(() => process.ppid !== parent && stopFor('parent process gone'), 1000).unref();
  }

  const booted = await boot(config, { log });
  let service: Service | undefined;
  let stopping: Promise<void> | undefined;

  stop = (reason, code) => {
    stopping ??= (async () => {
      log.info('shutting down', { reason });
      const force = setTimeout(() => {
        log.warn('shutdown took too long; stopping Postgres and exiting');
        void booted.close().finally(() => process.exit(1));
      }, 10_000);
      force.unref();
      try {
        // the service stops Postgres last; before it started, only Postgres is there to stop
        if (service) await service.stop();
        else
          await booted
            .close()
            .catch((err) => log.error('error while stopping Postgres', { error: String(err) }));
      } finally {
        clearTimeout(force);
        process.exit(code);
      }
    })();
    return stopping;
  };
  hurry = () => service?.hurry();
  // A crash, during shutdown or at any other time, still stops Postgres before the process ends.
  const crash = (err: unknown) => {
    log.error('uncaught error; stopping', {
      error: err instanceof Error ? (err.stack ?? err.message) : String(err),
    });
    void stop?.('crash', 1);
  };
  process.on('uncaughtException', crash);
  process.on('unhandledRejection', crash);
  if (requested) return void stop(requested, 0);

  try {
    service = await startService(config, log, booted);
  } catch (err) {
    // startService stopped what it had started, Postgres included
    write(
      process.stderr,
      `platform failed to start: ${err instanceof Error ? err.message : String(err)}\n`,
    );
    process.exit(1);
  }
  if (requested) return void stop(requested, 0);

  const lines = [
    `platform is running (${config.role === 'all' ? 'HTTP server and worker' : config.role})`,
    config.role !== 'worker'
      ? `  API        ${publicUrl(config, config.hosts.api)}   (also http://localhost:${config.port})`
      : '',
    config.role !== 'worker' ? `  Console    ${publicUrl(config, config.hosts.console)}` : '',
    config.role !== 'worker'
      ? `  Apps       ${config.publicScheme}://<app_id>.${config.hosts.apps}${config.publicPort ? `:${config.publicPort}` : ''}`
      : '',
    config.role !== 'worker'
      ? `  API docs   ${publicUrl(config, config.hosts.docs)}   (OpenAPI at /openapi.json)`
      : '',
    `  Database   ${booted.embedded ? `embedded Postgres in ${config.dataDir}/postgres` : 'DATABASE_URL'}`,
    ...(await firstRunLines(config, booted.deps.db)),
  ].filter(Boolean);
  write(process.stdout, lines.join('\n') + '\n');
}

/** On a server with no user yet, what to do next; nothing once someone has signed up. */
async function firstRunLines(config: Config, db: Db): Promise<string[]> {
  const anyone = await db
    .selectFrom('users')
    .select('id')
    .limit(1)
    .executeTakeFirst()
    .catch(() => ({ id: '' }));
  if (anyone || config.role === 'worker') return [];
  return [
    '',
    `Next: open ${publicUrl(config, config.hosts.console)}/sign-in and sign up.`,
    config.mail.smtpUrl
      ? "  The first user to sign up becomes this server's operator: sign up before you share the address."
      : "  The sign-in link is printed here (no SMTP_URL), and the first user becomes this server's operator.",
    `  New accounts start on the ${config.defaultPlan} plan${config.sellsPlans ? '' : ' (nothing is sold here: no Stripe key)'}; operators change`,
    "  plans on the console's Operator page or with npm run admin -- set-plan.",
  ];
}

main().catch((err) => {
  process.stderr.write(
    `platform failed to start: ${err instanceof Error ? err.message : String(err)}\n`,
  );
  process.exit(1);
});
