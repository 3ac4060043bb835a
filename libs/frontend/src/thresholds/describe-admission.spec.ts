import { FrontendConfig } from '../config/frontend-config';
import { describeAdmission } from './describe-admission';

describe('describeAdmission', () => {
  it('names the mode and every threshold, and the TTFT objective only when one is set', () => {
    const bare = describeAdmission(new FrontendConfig({ admissionControl: 'token-capacity' }));
    expect(bare).toMatch(/^busy-worker rejection ENABLED .*active_decode_blocks_threshold=unset/);
    expect(bare).not.toContain('TTFT');
    const sut = describeAdmission(
      new FrontendConfig({ thresholds: { ttftSloMs: 500 }, ttftSloSample: 0.05 }),
    );
    expect(sut).toContain('TTFT objective 500 ms');
    expect(sut).toContain('sampling 0.05');
  });
});
