/**
 * `platform`: publish a folder and operate an app from the terminal, on the `/v0/*` API only.
 * Exit 0 on success; on failure the contract's error code and message on stderr, exit 1.
 */
import { Command, CommanderError } from 'commander';
import { account } from './commands/account.ts';
import { apps, erase, open, unpublish } from './commands/apps.ts';
import { addReleaseCommands } from './commands/releases.ts';
import { addBindingCommands } from './commands/bindings.ts';
import { addD1Commands } from './commands/d1.ts';
import { appOpt, examples, jsonOpt } from './command-kit.ts';
import { resources } from './commands/resources.ts';
import { billing, billingPortal, billingUpgrade } from './commands/billing.ts';
import { login, logout, whoami } from './commands/auth.ts';
import { events } from './commands/events.ts';
import { jobsRun } from './commands/jobs.ts';
import { init, TEMPLATES } from './commands/init.ts';
import { secretsList, secretsRm, secretsSet } from './commands/secrets.ts';
import { analytics } from './commands/analytics.ts';
import {
  domainsAdd,
  domainsLs,
  domainsRm,
  domainsVerify,
  slugsAdd,
  slugsLs,
  slugsRm,
} from './commands/domains.ts';
import { printError } from './output.ts';

// Through `npm run cli`, npm runs us from the package root: work where the user typed the command.
if (process.env.npm_lifecycle_event === 'cli' && process.env.INIT_CWD)
  process.chdir(process.env.INIT_CWD);

const program = new Command('platform')
  .description(
    'Publish and operate apps on a platform server.\nServer and key: PLATFORM_API_URL (default http://localhost:8787) and PLATFORM_API_KEY, or `platform login`.',
  )
  .version('0.1.0')
  .showHelpAfterError('(run with --help for usage)')
  .exitOverride();

examples(
  program
    .command('login')
    .description(
      'log in by approving this device in the browser (or save a given API key), for later commands',
    )
    .option('--api-key <key>', 'use this API key (ap_...) instead of the browser, e.g. in CI')
    .option('--api-url <url>', 'the server (default: PLATFORM_API_URL or http://localhost:8787)')
    .option('--no-browser', 'print the link and code without opening a browser')
    .action((o) => login(o)),
  [
    'platform login',
    'platform login --no-browser --api-url https://api.example.com',
    'platform login --api-key ap_XXXX',
  ],
);
examples(
  program
    .command('logout')
    .description('forget the saved key; --revoke also revokes it on the server')
    .option('--revoke', 'revoke the key too')
    .action((o) => logout(o)),
  ['platform logout', 'platform logout --revoke'],
);
examples(
  program
    .command('whoami')
    .description('show the server, the key in use and your accounts')
    .option(...jsonOpt)
    .action((o) => whoami(o)),
  ['platform whoami'],
);

examples(
  program
    .command('init')
    .argument('[dir]', 'folder to set up', '.')
    .description('start an app from a template in a new or empty folder')
    .option('-t, --template <name>', `${Object.keys(TEMPLATES).join(', ')}`, 'static')
    .option(
      '--force',
      'add the template to a folder that already is an app (files that exist are kept)',
    )
    .addHelpText(
      'after',
      `\nTemplates:\n${Object.entries(TEMPLATES)
        .map(([k, d]) => `  ${k.padEnd(8)} ${d}`)
        .join('\n')}`,
    )
    .action((dir, o) => init(dir, o)),
  [
    'platform init my-site',
    'platform init my-api --template hono',
    'platform init pinger --template cron',
  ],
);
examples(
  program
    .command('publish')
    .argument('[dir]', 'folder with manifest.platform.json', '.')
    .description('publish a folder as a new release (the first publish creates the app)')
    .option(...appOpt)
    .option('-m, --message <text>', 'release note')
    .option(
      '--preview',
      'store the release beside the live one and print a link to its own preview origin',
    )
    .option(
      '--no-bundle',
      'send the server entry as it is (no esbuild: no TypeScript, no packages)',
    )
    .option(
      '--allow-missing-handlers',
      'let a release go live although its module has no handler for a declared job, webhook or fallback',
    )
    .option(...jsonOpt)
    .addHelpText(
      'after',
      '\nA TypeScript/JSX server entry, or one importing packages from node_modules, is bundled with esbuild\ninto .platform/build/server.js with a source map (never served); plain JavaScript with only\nrelative imports is sent as it is.\n\nExit codes: 0 the release is live (or, with --preview, served as a preview); 3 stored, waiting for secrets; 4 stored, needs a migration;\n5 stored, the server module did not load or has no handler for what the manifest declares; 1 any other error.',
    )
    // loaded when run: the bundler and the local service are not every command's start-up cost
    .action(async (dir, o) => (await import('./commands/publish.ts')).publish(dir, o)),
  [
    'platform publish',
    'platform publish ./site -m "new pricing page"',
    'platform publish --app k3j2h4g5f6d7s8a9 --json',
    'platform publish --preview -m "try the new checkout"',
  ],
);
examples(
  program
    .command('dev')
    .argument('[dir]', 'folder with manifest.platform.json', '.')
    .description(
      'run the folder on a local platform: republish on save, .env as secrets, live events',
    )
    .option(
      '--api <url>',
      'use this running platform (with your saved login) instead of starting one',
    )
    .option('--port <port>', 'port of the local platform (a free one if taken)', '8790')
    .option(
      '--data-dir <dir>',
      'where the local platform keeps its Postgres (default: PLATFORM_DEV_DATA_DIR or ~/.local/share/platform/dev)',
    )
    .option('--no-bundle', 'send the server entry as it is (no esbuild)')
    .addHelpText(
      'after',
      "\nThe development app is not the folder's published app: `platform publish` still publishes that one.\n" +
        'Secrets come from .env in the folder (never published). Run a job now with `platform jobs run <name> --dev`.\n' +
        'Ctrl-C stops the watcher and the local platform, Postgres included.',
    )
    .action(async (d, o) => (await import('./commands/dev.ts')).dev(d, o)),
  [
    'platform dev',
    'platform dev ./my-app --port 9000',
    'platform dev --api https://api.example.com',
  ],
);
examples(
  program
    .command('account')
    .description("the account's plan, usage against each limit, warnings and flags")
    .option(
      '--account <account_id>',
      'another account you belong to (default: the one you logged in with)',
    )
    .option(
      '--preview <plan>',
      'also show what moving to this plan would do (free, starter, business, business_plus, agency)',
    )
    .option(...jsonOpt)
    .action((o) => account(o)),
  ['platform account', 'platform account --preview free'],
);
const billingCmd = program
  .command('billing')
  .description('your plan and Stripe subscription (upgrade, portal)')
  .option(...jsonOpt)
  .action((o) => billing(o));
examples(
  billingCmd
    .command('upgrade')
    .argument('<plan>', 'starter, business, business_plus or agency')
    .description('print a Stripe Checkout link for the plan')
    .option(...jsonOpt)
    .action((p, o) => billingUpgrade(p, o)),
  ['platform billing upgrade starter'],
);
billingCmd
  .command('portal')
  .description("print a link to Stripe's customer portal (cards, invoices, cancel)")
  .option(...jsonOpt)
  .action((o) => billingPortal(o));
examples(
  program
    .command('apps')
    .description('list the apps of your default account')
    .option(...jsonOpt)
    .action((o) => apps(o)),
  ['platform apps'],
);
addReleaseCommands(program);
addBindingCommands(program);
addD1Commands(program);
examples(
  program
    .command('unpublish')
    .description('take the app offline (data, releases and secrets are kept)')
    .option(...appOpt)
    .option('--yes', 'confirm')
    .option(...jsonOpt)
    .action((o) => unpublish(o)),
  ['platform unpublish --yes'],
);
examples(
  program
    .command('erase')
    .description("erase an unpublished app's data rows, files, app users and secrets for good")
    .option(...appOpt)
    .option('--confirm <app_id>', "the app's id again: erasing cannot be undone")
    .option(...jsonOpt)
    .action((o) => erase(o)),
  ['platform erase --confirm <app_id>'],
);
examples(
  program
    .command('open')
    .description("print (and on a desktop open) the app's origin")
    .option(...appOpt)
    .option(...jsonOpt)
    .action((o) => open(o)),
  ['platform open'],
);

const secrets = program
  .command('secrets')
  .description("manage the app's secrets (values are never shown)");
examples(
  secrets
    .command('list')
    .description('list secret names, set and missing')
    .option(...appOpt)
    .option(...jsonOpt)
    .action((o) => secretsList(o)),
  ['platform secrets list'],
);
examples(
  secrets
    .command('set')
    .argument('<NAME>')
    .argument('[VALUE]', 'omit to read it from stdin (hidden on a terminal)')
    .description('set a secret')
    .option(...appOpt)
    .option(...jsonOpt)
    .action((n, v, o) => secretsSet(n, v, o)),
  ['platform secrets set STRIPE_KEY', 'printf %s "$TOKEN" | platform secrets set API_TOKEN'],
);
examples(
  secrets
    .command('rm')
    .argument('<NAME>')
    .description('delete a secret')
    .option(...appOpt)
    .option(...jsonOpt)
    .action((n, o) => secretsRm(n, o)),
  ['platform secrets rm OLD_KEY'],
);

const domains = program
  .command('domains')
  .description("the app's custom domains: add, list, verify through DNS, remove");
examples(
  domains
    .command('add')
    .argument('<HOSTNAME>')
    .description('add a custom domain and print the DNS records to create')
    .option(...appOpt)
    .option(...jsonOpt)
    .action((n, o) => domainsAdd(n, o)),
  ['platform domains add shop.example.com'],
);
examples(
  domains
    .command('ls')
    .description('list custom domains and their status')
    .option(...appOpt)
    .option(...jsonOpt)
    .action((o) => domainsLs(o)),
  ['platform domains ls'],
);
domains
  .command('verify')
  .argument('<HOSTNAME>')
  .description('check DNS now: exit 0 once verified, 1 with what to fix otherwise')
  .option(...appOpt)
  .option(...jsonOpt)
  .action((n, o) => domainsVerify(n, o));
examples(
  domains
    .command('rm')
    .argument('<HOSTNAME>')
    .description('remove a custom domain')
    .option(...appOpt)
    .option(...jsonOpt)
    .action((n, o) => domainsRm(n, o)),
  ['platform domains rm shop.example.com'],
);
examples(
  program
    .command('analytics')
    .description("the app's traffic, app users, jobs, webhooks and recent errors")
    .option(...appOpt)
    .option('--range <range>', '7d, 30d or 90d', '7d')
    .option(...jsonOpt)
    .action((o) => analytics(o)),
  ['platform analytics', 'platform analytics --range 30d --json'],
);
examples(
  program
    .command('resources')
    .description(
      'what the live release declares, and the rows, files and bytes each collection and store holds',
    )
    .option(...appOpt)
    .option(...jsonOpt)
    .action((o) => resources(o)),
  ['platform resources', 'platform resources --app <app_id> --json'],
);
const slugs = program
  .command('slugs')
  .description('friendly names under the apps host: <slug>.<apps host>');
examples(
  slugs
    .command('add')
    .argument('<SLUG>')
    .description('add a slug')
    .option(...appOpt)
    .option(...jsonOpt)
    .action((n, o) => slugsAdd(n, o)),
  ['platform slugs add my-shop'],
);
examples(
  slugs
    .command('ls')
    .description('list slugs')
    .option(...appOpt)
    .option(...jsonOpt)
    .action((o) => slugsLs(o)),
  ['platform slugs ls'],
);
examples(
  slugs
    .command('rm')
    .argument('<SLUG>')
    .description('remove a slug')
    .option(...appOpt)
    .option(...jsonOpt)
    .action((n, o) => slugsRm(n, o)),
  ['platform slugs rm my-shop'],
);

const jobs = program.command('jobs').description("the app's declared jobs");
examples(
  jobs
    .command('run')
    .argument('<job_name>', 'a job the live release declares in resources.jobs')
    .description('run a job now (its outcome arrives as job.* events)')
    .option('--payload <json>', 'the event payload, as JSON')
    .option('--dev', 'on the development app of the `platform dev` running for this folder')
    .option(...appOpt)
    .option(...jsonOpt)
    .action((n, o) => jobsRun(n, o)),
  [
    'platform jobs run nightly-report',
    `platform jobs run send-email --payload '{"to": "a@example.com"}'`,
    'platform jobs run nightly-report --dev',
  ],
);

examples(
  program
    .command('events')
    .description("read the app's event log")
    .option(...appOpt)
    .option('--type <type>', 'exact event type, e.g. runtime.request_error')
    .option('--severity <level>', 'debug, info, warn or error')
    .option('--search <text>', 'text in a message or its details')
    .option('--limit <n>', 'how many (1 to 100)')
    .option('-f, --follow', 'keep polling and print new events until interrupted')
    .option('--interval <ms>', 'poll interval with --follow', '1000')
    .option(...jsonOpt)
    .action((o) => events(o)),
  ['platform events --limit 20', 'platform events --type runtime.request_error --follow'],
);

// `platform --help` lists every command, subcommands included, one line each
const leaves = (cmd: Command, prefix: string): [string, string][] =>
  cmd.commands.flatMap((sub) => {
    const name = `${prefix} ${sub.name()}`;
    const args = sub.registeredArguments
      .map((a) => (a.required ? `<${a.name()}>` : `[${a.name()}]`))
      .join(' ');
    const own: [string, string][] =
      sub.commands.length && !(sub as unknown as { _actionHandler?: unknown })._actionHandler
        ? []
        : [[`${name}${args ? ` ${args}` : ''}`, sub.description()]];
    return [...own, ...leaves(sub, name)];
  });
program.configureHelp({ visibleCommands: () => [] });
program.addHelpText('after', () => {
  const rows = leaves(program, 'platform');
  const width = Math.max(...rows.map(([n]) => n.length));
  return `\nCommands:\n${rows.map(([n, d]) => `  ${n.padEnd(width)}  ${d}`).join('\n')}\n\nRun \`platform <command> --help\` for its options and examples.`;
});

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) process.exit(err.exitCode);
  printError(err);
  process.exit(1);
}
