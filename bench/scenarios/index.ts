import { Scenario } from '../lib/scenario';
import { admittedScenario } from './admitted';
import { bridgeScenario } from './bridge';
import { goodputScenario } from './goodput';
import { memoryScenario } from './memory';
import { priorityScenario } from './priority';
import { propagationScenario } from './propagation';
import { reactionScenario } from './reaction';
import { realEngineScenario } from './real-engine';
import { rejectionScenario } from './rejection';
import { sharedReservationsScenario } from './shared-reservations';
import { tenantsScenario } from './tenants';

/** Every scenario, in the order `npm run bench` runs them (bench/README.md: adding one). */
export const SCENARIOS: Scenario[] = [
  realEngineScenario,
  rejectionScenario,
  admittedScenario,
  reactionScenario,
  propagationScenario,
  sharedReservationsScenario,
  goodputScenario,
  priorityScenario,
  tenantsScenario,
  memoryScenario,
  bridgeScenario,
];
