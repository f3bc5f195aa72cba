/**
 * `npm run migrate`: applies pending migrations (sql/) to DATABASE_URL, or to the embedded
 * Postgres in PLATFORM_DATA_DIR (borrowed if the service is running, else started and stopped),
 * and prints the ids applied as one JSON object. `npm start` does the same at every start; this
 * is for deploys that migrate before they roll out new nodes.
 */
import { boot } from '../src/boot.ts';
import { configOrExit } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';

async function main(): Promise<void> {
  const config = configOrExit(process.env);
  const applied: string[] = [];
  const log = createLogger('warn');
  const booted = await boot(config, {
    log: {
      ...log,
      info: (msg, fields) =>
        void (
          msg === 'applied migrations' && applied.push(...((fields?.migrations as string[]) ?? []))
        ),
    },
    takeOverEmbedded: false,
    poolSize: 1,
    checkSecretsKey: false,
  });
  await booted.close();
  process.stdout.write(JSON.stringify({ applied }) + '\n');
}

main().catch((err) => {
  process.stderr.write(`migrate failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
