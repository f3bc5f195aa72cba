// node:process as the CLI bundles it: the sandbox's own process (env over the app's secrets,
// nextTick), with unenv's process for the rest.
import unenvProcess from 'unenv/node/process';

const own = globalThis.process;
const merged = Object.assign(Object.create(unenvProcess), { env: own.env, nextTick: own.nextTick });
export const env = own.env;
export const nextTick = own.nextTick;
export default merged;
