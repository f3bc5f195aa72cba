/** The guides: Markdown files in `docs/guides/` (`NN-slug.md`), read once and rendered with `marked`. */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { marked } from 'marked';

const DIR = fileURLToPath(new URL('../../docs/guides/', import.meta.url));

export type Guide = { slug: string; title: string; html: string };

let guides: Guide[] | undefined;

/** Every guide, in file order; the first `# heading` is its title. */
export function loadGuides(): Guide[] {
  guides ??= readdirSync(DIR)
    .filter((f) => /^\d\d-[a-z0-9-]+\.md$/.test(f))
    .sort()
    .map((file) => {
      const text = readFileSync(DIR + file, 'utf8');
      return {
        slug: file.slice(3, -3),
        title: (/^# (.+)$/m.exec(text)?.[1] ?? file).replaceAll('`', ''),
        html: marked.parse(text, { async: false }),
      };
    });
  return guides;
}
