/** Names shared by the report-flood tool and the scenarios that drive it. */
export const FLOOD_MODEL = 'Qwen/Qwen3-0.6B';
export const SENTINEL_MODEL = 'bench/sentinel';
export const SENTINEL_WORKER = 'sentinel';
