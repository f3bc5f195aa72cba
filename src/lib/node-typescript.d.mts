/** See node-typescript.mjs. */
export declare const nodeStripsTypes: boolean;
