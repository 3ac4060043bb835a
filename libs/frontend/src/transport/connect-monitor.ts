import { INestApplication } from '@nestjs/common';
import { MonitorTransport } from './monitor-transport';

/**
 * Hosts the worker monitor as a Nest microservice on the frontend's bus, in the same process
 * (a hybrid application). Before `app.init()`, so its handlers are registered with the app's.
 */
export function connectMonitor(app: INestApplication): void {
  app.connectMicroservice(
    { strategy: app.get(MonitorTransport).server },
    { inheritAppConfig: true },
  );
}
