/** Types for play-session.mjs, so the tests that drive it are type-checked. */
export declare const RECORDED_ROOT: string;
export declare function sessionLines(file: string, root: string): string[];
export declare function applyToolUse(block: { name: string; input?: Record<string, unknown> }, root: string): void;
export declare function play(lines: Iterable<string>, root: string, delayMs?: number): AsyncGenerator<string>;
