#!/usr/bin/env node
// The `platform` command: TypeScript source run through tsx's loader.
import { register } from 'tsx/esm/api';
register();
await import('./main.ts');
