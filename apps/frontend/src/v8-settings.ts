import { markOnMainThreadOnOneCpu, scavengeWhileMarking } from '@sluice/cli';

// Imported first by main.ts, so these V8 settings are in place before the app's modules load and
// fill the heap (libs/cli/src/concurrent-marking.ts: set later, they were measured to do
// nothing). createFrontendApp applies them too, for a frontend started some other way.
markOnMainThreadOnOneCpu();
scavengeWhileMarking();
