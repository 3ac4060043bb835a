export { UsageError, FlagValueError, InvalidFlagValue } from './usage.error';
export {
  envName,
  listFlag,
  switchFlag,
  valueFlag,
  type Flag,
  type FlagTable,
  type FlagValues,
  type ListFlag,
  type SwitchFlag,
  type ValueFlag,
} from './flag-table';
export {
  integerIn,
  matching,
  natsUrl,
  nonEmpty,
  numberIn,
  oneOf,
  postgresUrl,
  type NumberRule,
} from './flag-values';
export {
  flagErrorAs,
  parseFlags,
  type FlagParseOptions,
  type FlagProblem,
  type ParsedFlags,
} from './flags.parser';
export { formatUsage, type UsageText } from './usage.formatter';
export { formatFlagReference } from './flag-reference';
export {
  exitWithUsage,
  parseOrExit,
  readCommandLine,
  wantsHelp,
  type CommandLine,
  type CommandLineIo,
  type CommandLineResult,
} from './command-line';
export { stopOnSignals, type SignalledProcess } from './stop-on-signals';
