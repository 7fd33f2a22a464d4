/** Types of parent-watch.mjs (plain JavaScript: see there). */
export declare function watchParent(onGone: () => void, everyMs?: number): void;
