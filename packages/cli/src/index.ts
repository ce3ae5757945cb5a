/** @ipokit/cli (work in progress). */
export {};
