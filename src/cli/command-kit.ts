/** What every command's registration shares: its examples in `--help`, and the common options. */
import type { Command } from 'commander';

export const examples = (cmd: Command, lines: string[]) =>
  cmd.addHelpText('after', `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}`);
export const appOpt = [
  '--app <app_id>',
  'the app (default: the one linked to this folder in .platform/app.json)',
] as const;
export const jsonOpt = ['--json', "print the API's JSON response unchanged"] as const;
