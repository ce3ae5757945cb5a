// Express 4, installed for the tests under the alias `express4`, has the same app API
// as far as the adapter and its tests use it.
declare module 'express4' {
  import express from 'express';
  export default express;
}
