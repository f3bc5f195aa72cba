/** See launch.mjs. */
export declare function launch(entry: URL): Promise<void>;
