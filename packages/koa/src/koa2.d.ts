// Koa 2, installed for the tests under the alias `koa2`, has the same app API as far as
// the adapter and its tests use it.
declare module 'koa2' {
  import Koa from 'koa';
  export default Koa;
}
