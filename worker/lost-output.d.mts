/** Types of lost-output.mjs (plain JavaScript: see there). */
export declare function outliveLostOutput(): void;
