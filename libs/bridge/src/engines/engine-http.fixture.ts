import { EngineHttp } from './engine-adapter';

/**
 * For adapter specs: an EngineHttp answering from a path → body map (absent paths answer like a
 * 404), recording the paths asked in `asked`.
 */
export function answeringHttp(answers: Record<string, string>, asked: string[] = []): EngineHttp {
  const text = (path: string): Promise<string | undefined> => {
    asked.push(path);
    return Promise.resolve(answers[path]);
  };
  return {
    notes: new Set(),
    text,
    json: async (path) => {
      const body = await text(path);
      return body === undefined ? undefined : (JSON.parse(body) as unknown);
    },
  };
}
