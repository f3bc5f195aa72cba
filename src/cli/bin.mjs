#!/usr/bin/env node
// The `platform` command (how it starts: ../lib/launch.mjs).
import { launch } from '../lib/launch.mjs';

await launch(new URL('./main.ts', import.meta.url));
