/** See atomic-write.mjs. */
export declare function writeFileAtomic(file: string, data: string | Uint8Array): void;
