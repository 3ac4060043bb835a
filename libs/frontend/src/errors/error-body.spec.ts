import { encodeErrorBody, errorBody } from './error-body';

describe('errorBody', () => {
  it('writes message, type and code in the order of docs/api.md#errors', () => {
    const sut = encodeErrorBody('Model not found', 'not_found', 404);
    expect(sut.toString()).toBe('{"message":"Model not found","type":"not_found","code":404}');
  });

  it('adds details after the code only when there are some', () => {
    expect(
      JSON.stringify(errorBody('Invalid request: x', 'invalid_request_error', 400, ['x'])),
    ).toBe(
      '{"message":"Invalid request: x","type":"invalid_request_error","code":400,"details":["x"]}',
    );
    expect(Object.keys(errorBody('m', 't', 500))).toEqual(['message', 'type', 'code']);
  });
});
