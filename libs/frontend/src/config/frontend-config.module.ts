import { DynamicModule, Global, Module } from '@nestjs/common';
import { FrontendConfig } from './frontend-config';

@Global()
@Module({})
export class FrontendConfigModule {
  static forRoot(config: FrontendConfig): DynamicModule {
    return {
      module: FrontendConfigModule,
      providers: [{ provide: FrontendConfig, useValue: config }],
      exports: [FrontendConfig],
    };
  }
}
