/**
 * The spec's error tables (docs/spec.md#errors), written out for the test suites. They are
 * copied from the spec on purpose rather than imported from the core's own tables,
 * so that a wrong entry in the core cannot make its own check pass.
 */

/** Reason phrase (`title`) of each status the API answers with an error body. */
export const SPEC_TITLES: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  413: 'Content Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** Error `code` of each status. */
export const SPEC_CODES: Readonly<Record<number, string>> = {
  400: 'ERR:BADPARAM',
  401: 'ERR:INVLDKEY',
  403: 'ERR:PLAN',
  404: 'ERR:NOTFOUND',
  405: 'ERR:METHOD',
  413: 'ERR:TOOLARGE',
  414: 'ERR:URITOOLONG',
  415: 'ERR:MEDIATYPE',
  429: 'ERR:RATELIMIT',
  500: 'ERR:INTERNAL',
  503: 'ERR:UNAVAILABLE',
};
