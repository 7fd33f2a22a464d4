/** Types of parent-watch.mjs (plain JavaScript: see there). */
export declare function watchParent(onGone: () => void, everyMs?: number): void;
export declare function stopsWithParent(env?: NodeJS.ProcessEnv | Record<string, string | undefined>, forked?: boolean): boolean;
