/** The variables `npm start` reads besides the frontend's own (docs/configuration.md). */
export const EMBEDDED_ENV = {
  workers: {
    name: 'SLUICE_EMBEDDED_WORKERS',
    arg: 'N',
    default: '2, or 0 with --engine-target',
    help: 'simulated workers started beside the frontend, 0 to 64',
  },
  workerFlags: {
    name: 'SLUICE_EMBEDDED_WORKER_FLAGS',
    arg: 'FLAGS',
    default: undefined,
    help: 'flags given to every simulated worker, separated by spaces (e.g. --kv-total-blocks 4096 --speedup 0)',
  },
} as const;
