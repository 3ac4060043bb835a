import { FrontendConfig } from '../../config/frontend-config';
import { isLowerPriority, PriorityClass } from '../../config/priority';
import { AdmissionRequest } from '../admission-policy';
import { PriorityByKeyPolicy } from './priority-by-key.policy';

/** A request claiming `claimed`, sent with `apiKey`; lowering works as the guard's does. */
function requestOf(apiKey: string | null, claimed: PriorityClass): AdmissionRequest {
  let priority = claimed;
  return {
    model: 'm',
    endpoint: 'chat_completions',
    apiKey,
    ip: '10.0.0.1',
    headers: {},
    body: {},
    get priority() {
      return priority;
    },
    lowerPriority: (c) => {
      if (isLowerPriority(c, priority)) priority = c;
    },
    onFinish: () => undefined,
  };
}

describe('PriorityByKeyPolicy', () => {
  const sut = new PriorityByKeyPolicy(
    new FrontendConfig({
      priorityKeys: [
        { key: 'sk-ops', max: 'critical' },
        { key: 'sk-batch', max: 'sheddable' },
        { key: 'sk-app', max: 'standard' },
      ],
    }),
  );
  const servedAs = (apiKey: string | null, claimed: PriorityClass): PriorityClass => {
    const request = requestOf(apiKey, claimed);
    sut.admit(request);
    return request.priority;
  };

  it("lowers a class above the key's maximum to that maximum, and refuses nothing", () => {
    expect(servedAs('sk-app', 'critical')).toBe('standard');
    expect(servedAs('sk-batch', 'critical')).toBe('sheddable');
    expect(servedAs('sk-batch', 'standard')).toBe('sheddable');
  });

  it('keeps a class at or below the maximum', () => {
    expect(servedAs('sk-ops', 'critical')).toBe('critical');
    expect(servedAs('sk-ops', 'sheddable')).toBe('sheddable');
    expect(servedAs('sk-app', 'sheddable')).toBe('sheddable');
  });

  it('caps unlisted keys and requests without a key at standard', () => {
    expect(servedAs('sk-unknown', 'critical')).toBe('standard');
    expect(servedAs(null, 'critical')).toBe('standard');
    expect(servedAs('sk-unknown', 'sheddable')).toBe('sheddable');
    // A key that only differs by a prefix is another key.
    expect(servedAs('sk-ops-2', 'critical')).toBe('standard');
  });
});
