#!/usr/bin/env node
// The `platform` command. Node 22+ keeps the compiled code of the modules it loads in its compile
// cache (the OS's temp dir), so a command after the first starts sooner; Node 24 reads the
// TypeScript itself, elsewhere tsx's loader does (node-typescript.mjs).
import module from 'node:module';
import { nodeStripsTypes } from './node-typescript.mjs';

module.enableCompileCache?.();
if (!nodeStripsTypes) (await import('tsx/esm/api')).register();
await import('./main.ts');
