import type { Box, Version } from './types';

/** The server's address as the API wrote it in its absolute URLs (the reader's own view of it). */
export function serverOrigin(box: Box): string | undefined {
  const url = box.versions?.[0]?.release_url ?? box.current_version?.release_url;
  return url ? new URL(url).origin : undefined;
}

/** `vagrant box add` of one version, pointed at this server (VAGRANT_SERVER_URL). */
export function boxAddCommand(box: Box, version: Version, origin: string, provider?: string): string {
  const parts = [`VAGRANT_SERVER_URL=${origin} vagrant box add ${box.tag}`, `--box-version ${version.version}`];
  if (provider) parts.push(`--provider ${provider}`);
  return parts.join(' ');
}

/** A Vagrantfile that uses one version of the box from this server. */
export function vagrantfile(box: Box, version: Version, origin: string): string {
  return [
    'Vagrant.configure("2") do |config|',
    `  config.vm.box = "${box.tag}"`,
    `  config.vm.box_version = "${version.version}"`,
    `  config.vm.box_url = "${origin}/${box.tag}"`,
    'end',
  ].join('\n');
}
