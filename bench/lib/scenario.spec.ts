import { describeProcess, requireLikeForLike } from './processes';
import { atLeast, below, figure, verdict, within } from './scenario';

describe('verdict', () => {
  it('is met only when every round meets the target', () => {
    expect(verdict(figure('ratio', '×', [1.02, 1.1, 1.0], atLeast(1)))).toBe('met');
    expect(verdict(figure('p99', 'ms', [4.9, 3, 2], below(5)))).toBe('met');
  });

  it('straddles when some rounds meet it and some do not', () => {
    expect(verdict(figure('ratio', '×', [0.98, 1.05, 1.1], atLeast(1)))).toBe('straddles');
    expect(verdict(figure('p99', 'ms', [5, 3], below(5)))).toBe('straddles');
  });

  it('judges a range with both ends included', () => {
    expect(verdict(figure('ratio', '×', [0.9, 1, 1.1], within(0.9, 1.1)))).toBe('met');
    expect(verdict(figure('ratio', '×', [0.89, 1, 1.2], within(0.9, 1.1)))).toBe('straddles');
    expect(verdict(figure('ratio', '×', [0.5, 1.11], within(0.9, 1.1)))).toBe('missed');
  });

  it('is missed when no round meets it, and absent without a target or rounds', () => {
    expect(verdict(figure('ratio', '×', [0.5, 0.9], atLeast(1)))).toBe('missed');
    expect(verdict(figure('rate', 'req/s', [100]))).toBeNull();
    expect(verdict(figure('ratio', '×', [NaN], atLeast(1)))).toBeNull();
  });
});

describe('requireLikeForLike', () => {
  const me = describeProcess('bench', process.pid);

  it("reads this process's Node binary, flags and CPUs from /proc", () => {
    expect(me.isNode).toBe(true);
    expect(me.program).toBe(`node ${process.version}`);
    expect(me.nodeFlags).toBe(process.execArgv.join(' '));
    expect(me.cpus).toMatch(/^[0-9,-]+$/);
  });

  it('accepts processes that run alike and refuses any difference', () => {
    expect(() => requireLikeForLike([me, { ...me, role: 'other' }])).not.toThrow();
    expect(() =>
      requireLikeForLike([me, { ...me, nodeFlags: '--max-semi-space-size=16' }]),
    ).toThrow(/Node flags/);
    expect(() => requireLikeForLike([me, { ...me, cpus: '7' }])).toThrow(/CPUs/);
    const nginx = { ...me, isNode: false, program: '/usr/sbin/nginx', nodeFlags: '' };
    expect(() => requireLikeForLike([me, nginx])).not.toThrow();
  });
});
