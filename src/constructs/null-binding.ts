// The custom resources' null_resource and null provider, from @cdktf/provider-null. The CDK Terrain
// build (hangar-cdktn) uses ./null-binding-cdktn in place of this module: same names, same blocks.
export { NullProvider } from '@cdktf/provider-null/lib/provider';
export { Resource as NullResource } from '@cdktf/provider-null/lib/resource';
