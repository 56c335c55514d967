export declare const MALLOC_TUNABLES: string;
export declare function withMallocTunables(current?: string): string | undefined;
