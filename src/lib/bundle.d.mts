/** See bundle.mjs. */
export declare function hashFiles(files: string[]): string;
export declare function bundled(entries: string[]): Promise<string[]>;
