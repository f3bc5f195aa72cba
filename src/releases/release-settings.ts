/**
 * What a release carries as settings rather than files to serve: its bindings
 * (`.platform/bindings.json`), its Workers assets settings (`.platform/assets.json`), and the static
 * root's `_redirects` and `_headers`, which are taken out of the files (rules, never served).
 */
import { BINDINGS_PATH, type Bindings, parseBindings } from '../bindings/declared.ts';
import {
  type AssetRules,
  parseHeaders,
  parseRedirects,
  WORKERS_ASSETS_PATH,
  type WorkersAssets,
  workersAssetsOf,
} from './asset-rules.ts';

/** The parts of a release's view (live.ts) that its settings fill. */
type SettingsOf<F extends { path: string }> = {
  files: Map<string, F>;
  staticRoot: string | null;
  bindings: Bindings;
  workersAssets: WorkersAssets | null;
  assetRules: AssetRules | null;
};

export async function loadReleaseSettings<F extends { path: string }>(
  view: SettingsOf<F>,
  bytes: (file: F) => Promise<Buffer>,
): Promise<void> {
  const text = async (file: F) => (await bytes(file)).toString('utf8');
  const declared = view.files.get(BINDINGS_PATH);
  if (declared) {
    // checked at publish: a file that no longer parses (never expected) binds nothing
    const parsed = parseBindings(await text(declared));
    if (parsed.ok) view.bindings = parsed.bindings;
  }
  const settings = view.files.get(WORKERS_ASSETS_PATH);
  if (settings) {
    let json: unknown;
    try {
      json = JSON.parse(await text(settings));
    } catch {
      json = {};
    }
    view.workersAssets = workersAssetsOf(json);
  }
  if (view.staticRoot === null) return;
  const read = async (name: string) => {
    const file = view.files.get(`${view.staticRoot}/${name}`);
    if (!file) return undefined;
    view.files.delete(file.path);
    return text(file);
  };
  const [redirects, headers] = await Promise.all([read('_redirects'), read('_headers')]);
  if (redirects === undefined && headers === undefined) return;
  view.assetRules = {
    redirects: redirects ? parseRedirects(redirects) : [],
    headers: headers ? parseHeaders(headers) : [],
  };
}
