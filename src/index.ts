// The jsii entry point: constructs, their props and enums. Nothing else is exported here.
export { Hangar, HangarProps } from './constructs/hangar';
export { Box, BoxProps } from './constructs/registry';
// registry constructs (BoxVersion, BoxProvider, ...) are exported above with Box
// secrets constructs
// catalog constructs
