/** @ipokit/client: typed client for the IPO API (work in progress). */
export {};
