// `npm start`: the service (how it starts: lib/launch.mjs).
import { launch } from './lib/launch.mjs';

await launch(new URL('./main.ts', import.meta.url));
