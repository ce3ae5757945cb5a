#!/usr/bin/env node
/** The `ipokit` command (work in progress). */
export {};
