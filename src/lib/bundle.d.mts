/** See bundle.mjs. */
export declare function bundled(entries: string[]): Promise<string[]>;
