/** Types of scripts/build-inputs.mjs (for test/build-inputs.test.ts). */
export declare const STAMP: string;
export declare function buildInputsDigest(root: string): string;
export declare function builtDigest(root: string): string | undefined;
