export declare const MALLOC_TUNABLES: string;
