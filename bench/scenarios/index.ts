import { Scenario } from '../lib/context';
import { rejectionScenario } from './s1-rejection';
import { admittedScenario } from './s2-admitted';
import { decisionScenario } from './s3-decision';
import { ingestScenario } from './s4-ingest';
import { reactionScenario } from './s5-reaction';
import { propagationScenario } from './s6-propagation';
import { goodputScenario } from './s7-goodput';
import { memoryScenario } from './s8-memory';
import { bridgeScenario } from './s9-bridge';
import { runtimeScenario } from './s10-runtime';
import { youngGenerationScenario } from './s11-young-generation';
import { realEngineScenario } from './s12-real-engine';

/** Every scenario of issue 5, in the order they run. */
export const SCENARIOS: Scenario[] = [
  rejectionScenario,
  admittedScenario,
  decisionScenario,
  ingestScenario,
  reactionScenario,
  propagationScenario,
  goodputScenario,
  memoryScenario,
  bridgeScenario,
  runtimeScenario,
  youngGenerationScenario,
  realEngineScenario,
];
